// Instructions per HTTP request in the server, counted by valgrind's callgrind (issue 24): the HTTP section's rows by a
// measure the machine's load does not move. The nanoseconds of http.bench.mjs move by more between rounds than a
// decorated route costs, so its SPEC §14.6 verdicts can stay unsettled; instruction counts are repeatable.
//
// Server processes (http.server.mjs, default configuration, on Node 24; the peers in processes of their own) run under
// callgrind; this process is their client: one keep-alive connection per application, one request at a time, so every
// request is one event-loop turn of the server, as for a lightly loaded service. Each route is warmed up first (V8
// keeps optimising for ~25,000 requests of this mix, and a decorated route's count still settled after 30,000: 40,000
// per route). Then, per round and route (order alternating between rounds), `callgrind_control -z` zeroes the
// counters, N requests are sent, `callgrind_control -d` dumps, and the dump's total over N is that route's
// instructions per request: everything the server did for it (HTTP parsing, Nest, the handler, timers that fired,
// garbage collection), and nothing else, since the server is idle between windows. (No forced collection between
// windows: after `gc()` the next window counted 2–3× more, V8 having dropped compiled code and feedback; the
// young-generation collections a window triggers, one to five here, are part of what a request costs.)
//   node tools/bench/src/http-instructions.bench.mjs   (env BENCH_HTTP_ADAPTERS, HI_ROUNDS, HI_N, HI_WARM, BENCH_NODE)
// Writes the "http-instructions" section of BENCHMARKS.md.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, referenceNode, writeSection } from './lib/report.mjs';
import { instructionVerdict } from './lib/http-target.mjs';
import { VARIANTS } from './lib/http-variants.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const ADAPTERS = (process.env.BENCH_HTTP_ADAPTERS ?? 'fastify,express').split(',');
const ROUNDS = Number(process.env.HI_ROUNDS ?? 6);
const N = Number(process.env.HI_N ?? 4000);
const WARM = Number(process.env.HI_WARM ?? 40_000);
const V8_FLAGS = ['--predictable', '--hash-seed=1', '--random-seed=1'];
/**
 * [name, label, server process, application, route]. opossum and cockatiel each run in a server process of their own
 * and only their own route is counted there; their rows are compared with the Ballast process's application without
 * Ballast (the same Nest application code). opossum's once-a-second snapshot sorts every latency of its 10 s window,
 * and under valgrind the wall clock runs ~50× slower per request: in a shared process that work fell into whichever
 * route's window was being counted (≈ 4,500 instructions per request of a Ballast row, seen in a callgrind profile).
 * It is opossum's own cost (proportional to its calls, so about the same per request at full speed), so it belongs to
 * opossum's row and to no other.
 */
const byName = new Map(VARIANTS.map((v) => [v[0], v]));
/** The CPU-time bench's row `name`, run in server process `proc` (its label, application and route unchanged). */
const row = (name, proc) => {
  const [, label, , app, route] = byName.get(name);
  return [name, label, proc, app, route];
};
export const ROUTES = [
  row('bare', 'ballast'),
  row('plain', 'ballast'),
  [
    'control',
    'no Ballast, the same application served once more (the floor: what two identical applications differ by)',
    'ballast',
    'control',
    '/plain',
  ],
  row('req', 'ballast'),
  row('resilient', 'ballast'),
  row('opossum', 'opossum'),
  row('cockatiel', 'cockatiel'),
];

const node = process.env.BENCH_NODE ?? referenceNode();
// HI_RESULTS=<file>: write the section from the JSON line a run printed, without measuring again.
const saved = process.env.HI_RESULTS
  ? JSON.parse(fs.readFileSync(process.env.HI_RESULTS, 'utf8'))
  : undefined;
const version = saved?.node ?? execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
if (saved === undefined && spawnSync('valgrind', ['--version']).status !== 0) {
  console.error('http-instructions.bench: valgrind is not installed (apt-get install valgrind); skipped');
  process.exit(0);
}

/** The server under callgrind, its ports, and a line-reader for its stdout. */
async function startServer(adapter, dir) {
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      `--callgrind-out-file=${path.join(dir, 'cg.%p')}`,
      '--smc-check=all-non-file',
      '--dump-instr=no',
      node,
      ...V8_FLAGS,
      path.join(here, 'http.server.mjs'),
      adapter,
      'default',
      'control',
    ],
    { stdio: ['pipe', 'pipe', 'pipe'], cwd: here },
  );
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  // The server's first line is its ports; nothing else is read from it.
  const ports = await new Promise((resolve, reject) => {
    let buffered = '';
    const onData = (d) => {
      buffered += d;
      const i = buffered.indexOf('\n');
      if (i < 0) return;
      child.stdout.off('data', onData);
      resolve(JSON.parse(buffered.slice(0, i)));
    };
    child.stdout.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server exited (${code}):\n${stderr.slice(-2000)}`)));
  });
  return { child, ports };
}

/** Sequential GETs on one keep-alive connection per port. */
function client() {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const get = (port, route) =>
    new Promise((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port, path: route, agent }, (res) => {
          if (res.statusCode !== 200) reject(new Error(`${route}: HTTP ${res.statusCode}`));
          res.resume();
          res.on('end', resolve);
        })
        .on('error', reject);
    });
  return {
    async send(port, route, n) {
      for (let i = 0; i < n; i++) await get(port, route);
    },
    close: () => agent.destroy(),
  };
}

/** Instructions the server ran since the last zeroing: dumps, reads the dump's total, deletes the file. */
function dumpTotal(pid, dir) {
  execFileSync('callgrind_control', ['-d', String(pid)], { stdio: 'pipe' });
  const dumps = fs.readdirSync(dir).filter((f) => f.startsWith(`cg.${pid}.`));
  if (dumps.length !== 1) throw new Error(`expected one callgrind dump in ${dir}, found ${dumps.join(', ')}`);
  const file = path.join(dir, dumps[0]);
  const m = /^(?:summary|totals):\s*(\d+)/m.exec(fs.readFileSync(file, 'utf8'));
  fs.unlinkSync(file);
  if (m === null) throw new Error(`no total in ${file}`);
  return Number(m[1]);
}

const today = new Date().toISOString().slice(0, 10);
const results = saved?.results ?? {};
for (const adapter of saved === undefined ? ADAPTERS : []) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ballast-hi-'));
  const procs = [...new Set(ROUTES.map((r) => r[2]))];
  const servers = Object.fromEntries(
    await Promise.all(procs.map(async (p) => [p, await startServer(adapter, dir)])),
  );
  const c = client();
  try {
    for (const [, , proc, app, route] of ROUTES) await c.send(servers[proc].ports[app], route, WARM);
    const perRound = Object.fromEntries(ROUTES.map(([name]) => [name, []]));
    // Round -1 settles and is not kept: its first window in each process still counted leftovers of the warm-up
    // (opossum sorting the warm-up's latencies; up to +50 % on a row).
    for (let round = -1; round < ROUNDS; round++) {
      const order = round % 2 !== 0 ? ROUTES : [...ROUTES].reverse();
      for (const [name, , proc, app, route] of order) {
        const { child, ports } = servers[proc];
        execFileSync('callgrind_control', ['-z', String(child.pid)], { stdio: 'pipe' });
        await c.send(ports[app], route, N);
        const perRequest = dumpTotal(child.pid, dir) / N;
        if (round >= 0) perRound[name].push(perRequest);
        console.error(
          `${adapter} round ${round} ${name}: ${Math.round(perRequest)} instructions per request`,
        );
      }
    }
    results[adapter] = perRound;
  } finally {
    c.close();
    for (const { child } of Object.values(servers)) {
      child.stdin.end();
      await new Promise((resolve) => child.once('exit', resolve));
    }
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
const run = saved ?? { node: version, measured: today, warm: WARM, n: N, rounds: ROUNDS, results };
console.log(JSON.stringify(run));
const adapters = Object.keys(results);

const k = (x) => Math.round(x).toLocaleString('en-US');
const rows = ROUTES.map(([name, label]) => {
  const cells = adapters.map((a) => {
    const xs = results[a][name];
    return `${k(median(xs))} | ${k(Math.min(...xs))}–${k(Math.max(...xs))}`;
  });
  return `| ${label} | ${cells.join(' | ')} |`;
});
const body = `## HTTP requests in instructions (callgrind)

The HTTP section's rows counted in instructions instead of CPU time: the server processes (default configuration;
one serves an application without Ballast and one importing \`ResilienceModule\`, and opossum and cockatiel each get a
process of their own, as in the HTTP section) run under \`valgrind --tool=callgrind\` on Node ${version}
(V8 flags \`${V8_FLAGS.join(' ')}\`), and this bench is their client: one keep-alive connection per
application, one request at a time, so each request is one event-loop turn of the server. After ${k(run.warm)} requests per route to warm up, each
route gets ${k(run.n)} requests per round, ${run.rounds} rounds in alternating order after one that is not kept; the
counters are zeroed before and read after each route's requests (\`callgrind_control\`), so a figure is everything its
server ran for those requests — parsing, Nest, the handler, timers, garbage collection — divided by their number.
Instruction counts do not move with the machine's load: this is the repeatable reading of the HTTP section's targets.
Measured ${run.measured}.

| variant | ${adapters.map((a) => `${a}: instructions per request (median) | ${a}: rounds (min–max)`).join(' | ')} |
|---|${adapters.map(() => '---:|---:').join('|')}|
${rows.join('\n')}

${instructionVerdict(results, adapters)}

Reading it:
- A round of a Ballast row can count up to ≈ 10 % more than the others (the max column: V8 recompiling or a larger
  collection falling in its window); the median does not move with it. The rows without a decorated route are Nest
  applications of one process, and two identical ones differ by a few hundred instructions per request: the control
  row serves the application without Ballast once more, and the undecorated route counts as costing nothing measurable
  when it differs from the application without Ballast by no more than the control does.
- opossum's row includes its once-a-second snapshot, which sorts every latency of its 10 s window. Under valgrind a
  second holds ~50× fewer requests, and the window as many fewer latencies, so per request that work costs about what
  it costs at full speed; it comes in lumps, which is why opossum's rounds spread so widely. Its lowest round is
  closest to opossum without it.
- The decorated route's addition here and the route section's (\`route-instructions.bench.mjs\` with its \`turn\`
  and \`fresh\` pieces, Nest's route function without sockets) are the same work counted two ways: where they agree,
  nothing per request happens over HTTP that the probe leaves out.

Rerun alone: \`npx nx run-many -t build -p @ballast/nestjs && node tools/bench/src/http-instructions.bench.mjs\` (env
\`BENCH_HTTP_ADAPTERS\`, \`HI_ROUNDS\`, \`HI_N\`, \`HI_WARM\`; valgrind from Debian's package; ≈ 30 min).`;
writeSection('http-instructions', body);
