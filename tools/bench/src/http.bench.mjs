// HTTP cost of @Resilient (issue 7): the same Nest handler with and without `@Resilient('bench')` — a policy of
// rate limit (high, never rejecting) + circuit breaker + retry + timeout — on Express and Fastify, measured with
// autocannon in the same run. The server runs in a child process (http.server.mjs) so server and load generator
// each get a core; variants are interleaved per round (order alternating) and medians reported, because the
// machine is shared and noisy. The servers run on Node 24, the reference runtime (SPEC §12.5); BENCH_NODE=<node>
// runs them on that Node instead. Writes the "http" (or "http-cross") section of BENCHMARKS.md.
import { execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { machine, measuredNode, median, quantile, writeSection } from './lib/report.mjs';
import { targetVerdict } from './lib/http-target.mjs';
import { VARIANTS } from './lib/http-variants.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const ROUNDS = Number(process.env.BENCH_HTTP_ROUNDS ?? 9);
const DURATION = Number(process.env.BENCH_HTTP_DURATION ?? 8);
const CONNECTIONS = Number(process.env.BENCH_HTTP_CONNECTIONS ?? 16);
const ADAPTERS = (process.env.BENCH_HTTP_ADAPTERS ?? 'express,fastify').split(',');
/**
 * What each `@Resilient` row is compared with (same process, same round): the undecorated handler, i.e. all a route
 * pays once decorated (issue 7's goal), and the application without Ballast (what adopting Ballast costs the
 * process, AsyncLocalStorage's tax on its other promises included).
 */
const ROUTE_BASE = {
  resilient: 'plain',
  req: 'plain',
  'req-noctx': 'plain-noctx',
  'resilient-noctx': 'plain-noctx',
  opossum: 'bare',
  cockatiel: 'bare',
};
const APP_BASE = { resilient: 'bare', 'resilient-noctx': 'bare', opossum: 'bare', cockatiel: 'bare' };
/** Server processes on one core, this load generator on the other, when taskset is there to pin them. */
const PIN = (() => {
  try {
    // Review fix: `-a`. Without it only the main thread moved to core 0; V8's GC and compiler threads and libuv's
    // pool, started before this line, stayed free to run on core 1 beside the server being measured.
    execFileSync('taskset', ['-a', '-cp', '0', String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** The server's user-space CPU time so far (µs). */
function cpuOf(server) {
  return new Promise((resolve) => {
    server.child.stdout.once('data', (line) => resolve(JSON.parse(String(line)).cpu));
    server.child.stdin.write('cpu\n');
  });
}

const { node, version, cross } = measuredNode();

function startServer(adapter, mode) {
  const command = [node, path.join(here, 'http.server.mjs'), adapter, mode];
  const child = PIN
    ? spawn('taskset', ['-c', '1', ...command], { stdio: ['pipe', 'pipe', 'inherit'] })
    : spawn(command[0], command.slice(1), { stdio: ['pipe', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.stdout.once('data', (line) => resolve({ child, ports: JSON.parse(String(line)) }));
  });
}

function stopServer(child) {
  return new Promise((resolve) => {
    child.once('exit', resolve);
    child.stdin.end();
  });
}

async function load(server, url, duration) {
  const cpu0 = await cpuOf(server);
  const r = await autocannon({ url, connections: CONNECTIONS, duration });
  const cpu = (await cpuOf(server)) - cpu0;
  if (r.errors > 0 || r.non2xx > 0)
    throw new Error(`${url}: ${r.errors} errors, ${r.non2xx} non-2xx responses`);
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    mean: r.latency.average,
    cpuPerRequest: cpu / r.requests.total,
  };
}

const env = machine(version);
const results = {}; // adapter → variant → [{ rps, p50, p99, mean }]
for (const adapter of ADAPTERS) {
  // Review fix: each peer gets a server process of its own (the same 'noctx' server). In the shared process,
  // opossum's 1 s snapshot kept sorting the latencies of its last measurement for up to 10 s, and that CPU was
  // charged to the next row of that process: cockatiel in odd rounds, `ambientContext: false` @Resilient in even
  // ones (+1–2.6 µs per Fastify request measured right after opossum, ≈ +10–20 %).
  const servers = {
    ctx: await startServer(adapter, 'ctx'),
    noctx: await startServer(adapter, 'noctx'),
    opossum: await startServer(adapter, 'noctx'),
    cockatiel: await startServer(adapter, 'noctx'),
  };
  const url = ([, , server, app, route]) => `http://127.0.0.1:${servers[server].ports[app]}${route}`;
  const run = (v, duration) => load(servers[v[2]], url(v), duration);
  try {
    for (const v of VARIANTS) await run(v, 2); // warm-up: JIT, connection pools, policy state
    results[adapter] = Object.fromEntries(VARIANTS.map(([name]) => [name, []]));
    for (let round = 1; round <= ROUNDS; round++) {
      const order = round % 2 === 1 ? VARIANTS : [...VARIANTS].reverse();
      for (const v of order) results[adapter][v[0]].push(await run(v, DURATION));
      process.stderr.write(`${adapter}: round ${round}/${ROUNDS} done\n`);
    }
  } finally {
    await Promise.all(Object.values(servers).map((s) => stopServer(s.child)));
  }
}

const pct = (x) => `${(x * 100).toFixed(1)} %`;
const fmt = (n, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
let table =
  '| adapter | variant | req/s (median) | latency p50 / p99 ms (median) | server user CPU µs per request (median) | CPU cost vs undecorated | CPU cost vs no Ballast |\n';
table += '|---|---|---:|---:|---:|---:|---:|\n';
/** `1 − cpu(base) / cpu(row)` per round (the rows of one round ran back to back), then median and quartiles. */
function cost(r, name, base) {
  if (base === undefined) return undefined;
  const perRound = r[name].map((row, i) => 1 - r[base][i].cpuPerRequest / row.cpuPerRequest);
  const rps = median(r[name].map((row, i) => 1 - row.rps / r[base][i].rps));
  return { cpu: median(perRound), q1: quantile(perRound, 0.25), q3: quantile(perRound, 0.75), rps };
}
const costs = {};
for (const adapter of ADAPTERS) {
  const r = results[adapter];
  costs[adapter] = {};
  for (const [name, label] of VARIANTS) {
    const rows = r[name];
    const route = cost(r, name, ROUTE_BASE[name]);
    const app = cost(r, name, APP_BASE[name]);
    if (route !== undefined) costs[adapter][name] = { route, app };
    table += `| ${adapter} | ${label} | ${fmt(median(rows.map((x) => x.rps)))} | ${median(rows.map((x) => x.p50))} / ${median(
      rows.map((x) => x.p99),
    )} | ${fmt(median(rows.map((x) => x.cpuPerRequest)), 1)} | ${route === undefined ? '' : pct(route.cpu)} | ${
      app === undefined ? '' : pct(app.cpu)
    } |\n`;
  }
}
const verdict = ADAPTERS.map((a) => {
  const c = costs[a];
  const one = (x) =>
    `${pct(x.route.cpu)} (middle half of rounds ${pct(x.route.q1)} to ${pct(x.route.q3)}; ${pct(
      x.route.rps,
    )} fewer req/s)`;
  return `${a}: \`@Resilient\` costs ${one(c.resilient)} by default, ${one(c['resilient-noctx'])} with \`ambientContext: false\`; opossum costs ${one(c.opossum)}, cockatiel ${one(c.cockatiel)}`;
}).join('; ');

const target = targetVerdict(results, ADAPTERS, cross);
const body = `## HTTP: \`@Resilient\` on a Nest handler (\`@ballast/nestjs\`)${cross ? ` on Node ${version} (cross-check)` : ''}

The same handler (\`return { ok: true }\`) served nine ways by four server processes per adapter (Nest 11.2.10;
Express via platform-express 11.2.10, Fastify via platform-fastify 11.2.8), loaded by autocannon 9 from the parent
process: ${CONNECTIONS} keep-alive connections, ${DURATION} s per measurement after a 2 s warm-up per variant, ${ROUNDS} rounds
with the variant order alternating, medians. ${
  PIN
    ? 'The server processes are pinned to one core and the load generator to the other (`taskset`).'
    : 'The processes were not pinned to cores (no `taskset`).'
} The policy is rate limit (10⁹/s, never rejects) + circuit breaker + retry(3) + timeout(1 s), in-memory stores.
One process runs \`ResilienceModule\` by default; another runs an application without Ballast and one with
\`ambientContext: false\`, so nothing in it uses AsyncLocalStorage; opossum and cockatiel each run in a process like
that one of their own, so work a peer leaves on timers (opossum's snapshots) is not charged to another row. Machine: ${env}. Measured ${new Date().toISOString().slice(0, 10)}.

${table}
Result, against the same handler undecorated: ${verdict}. Issue 7's goal is under 5 % throughput cost for the
policy: ${ADAPTERS.map((a) => `${a} ${costs[a].resilient.route.cpu < 0.05 ? 'meets' : 'misses'} it by default and ${costs[a]['resilient-noctx'].route.cpu < 0.05 ? 'meets' : 'misses'} it with \`ambientContext: false\``).join('; ')} (by the median CPU cost; see the spread).

${target}

Reading the rows:
- "CPU cost" is \`1 − cpu(base) / cpu(@Resilient)\` from the server's user-space CPU per request, per round (the rows
  of a round ran back to back), then the median: what a CPU-bound server would lose in throughput, and much steadier
  than req/s, which also moves with the load generator.
- **vs undecorated** is everything a route pays once decorated, in the same process: issue 7's goal. **vs no
  Ballast** is what adopting Ballast costs that route against an application without it; by default it includes
  Node 20's AsyncLocalStorage tax, which the process's other routes pay too (compare the two undecorated rows).
- What \`@Resilient\` adds: core's \`run\` (see the pipeline section), one more route parameter (the request, which
  makes Nest resolve parameters through its async pipes step) and the client-disconnect wiring (one \`close\`
  listener per connection, not per request). The section *A Nest route without the network* measures it without the network's noise.
- Against a handler that does real I/O (a database call, another service) the per-call cost of \`ambientContext: false\`
  is a smaller share; the default's AsyncLocalStorage tax is paid per promise, so it grows with the handler's own
  promise work.
- Read the spread, not only the medians: without the network a decorated route adds ≈ 1.4–3.6 µs of CPU (the route
  section); an Express request here varies from round to round by more than that. The section *HTTP requests in
  instructions* counts the same rows with callgrind, which the machine's load does not move: where this section's
  verdict is unsettled, that one settles it.
- Each measurement lasts ${DURATION} s, less than opossum's 10 s window, so opossum never reaches the steady cost
  the sustained-load section shows (this favours opossum here).

Rerun alone: \`npx nx run-many -t build -p @ballast/nestjs && node tools/bench/src/http.bench.mjs\` (env
\`BENCH_HTTP_ROUNDS\`, \`BENCH_HTTP_DURATION\`, \`BENCH_HTTP_CONNECTIONS\`, \`BENCH_HTTP_ADAPTERS\`; servers on Node 24, or
\`BENCH_NODE=$(command -v node)\` for the project's Node 20). The machine is shared and noisy: compare rows measured
together, not across runs.`;
writeSection(cross ? 'http-cross' : 'http', body);
console.log(body);
