// What a Nest route pays per request for `@Resilient` (issue 7), without HTTP: Nest's whole route function called
// in a loop by route.probe.mjs, on both adapters, next to the peers and to a do-nothing interceptor; a fresh
// process per (variant, round), interleaved rounds, medians. Much steadier than the HTTP section, whose
// per-request spread on this machine is about as large as the effect. On Node 24, the reference runtime (SPEC
// §12.5); BENCH_NODE=<node> measures on that Node instead. Writes the "handler" (or "handler-cross") section.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CAN_PIN, machine, measuredNode, median, runChild, writeSection } from './lib/report.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const probe = path.join(here, 'route.probe.mjs');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const ADAPTERS = ['express', 'fastify'];
// [variant, mode, label, calls, baseline]: the slow rows get fewer calls. A process whose routes never run a
// Ballast call never turns AsyncLocalStorage on, so the undecorated row of the default module is untaxed.
const VARIANTS = [
  ['plain', 'default', 'undecorated handler', 200_000, undefined],
  [
    'req',
    'default',
    'undecorated handler taking the request (`@Req()`): Nest resolves its parameters',
    200_000,
    'plain/default',
  ],
  ['noop', 'default', 'undecorated handler behind a do-nothing interceptor', 20_000, 'plain/default'],
  [
    'resilient',
    'default',
    "`@Resilient('bench')`: rate limit + breaker + retry + timeout",
    200_000,
    'plain/default',
  ],
  ['resilient', 'noctx', "`@Resilient('bench')`, `ambientContext: false`", 200_000, 'plain/default'],
  ['opossum', 'default', 'opossum (breaker + timeout 1 s) in the handler', 200_000, 'plain/default'],
  [
    'cockatiel',
    'default',
    'cockatiel `wrap(breaker, retry(3), timeout(1 s))` in the handler',
    20_000,
    'plain/default',
  ],
  ['plain', 'als', 'undecorated handler, in a process already using AsyncLocalStorage', 200_000, undefined],
  [
    'resilient',
    'als',
    "`@Resilient('bench')`, in a process already using AsyncLocalStorage",
    200_000,
    'plain/als',
  ],
];
const key = (adapter, [v, m]) => `${adapter}:${v}/${m}`;
const results = new Map();
for (const a of ADAPTERS) for (const v of VARIANTS) results.set(key(a, v), []);
const { node, version, cross } = measuredNode();
const env = machine(version);
for (let round = 1; round <= ROUNDS; round++) {
  for (const a of ADAPTERS) {
    const order = round % 2 === 1 ? VARIANTS : [...VARIANTS].reverse();
    for (const v of order)
      results.get(key(a, v)).push(runChild(probe, [v[0], a, v[1], String(v[3])], [], node).us);
  }
  process.stderr.write(`round ${round}/${ROUNDS} done\n`);
}
const med = (k) => median(results.get(k));
const fmt = (us) => us.toFixed(2);
let table = `| variant | ${ADAPTERS.map((a) => `${a}: µs per request | ${a}: over its baseline (µs)`).join(' | ')} |
|---|${ADAPTERS.map(() => '---:|---:').join('|')}|
`;
for (const v of VARIANTS) {
  const cells = ADAPTERS.map((a) => {
    const own = med(key(a, v));
    return `${fmt(own)} | ${v[4] === undefined ? '' : fmt(own - med(`${a}:${v[4]}`))}`;
  });
  table += `| ${v[2]} | ${cells.join(' | ')} |\n`;
}
const body = `## A Nest route without the network (\`@ballast/nestjs\`)${cross ? ` on Node ${version} (cross-check)` : ''}

Nest's whole route function — what Express or Fastify calls for a request: guards, parameter resolution,
interceptors, the handler \`return { ok: true }\`, the reply — called in a loop with stand-in request and response
objects (\`tools/bench/src/route.probe.mjs\`): a fresh process per (variant, adapter, round), ${ROUNDS} interleaved
rounds, medians${CAN_PIN ? ', pinned to one core (`taskset`)' : ''}. Same policy and peers as the HTTP section. Each
row's baseline is the undecorated handler of a process like its own: the first, where nothing has turned
AsyncLocalStorage on, for every row above the last two; the one in a process already using it for the last row.
On Node 20, the default \`@Resilient\` row includes the promise-hook tax on Nest's own promises, which its first Ballast
call turns on for the whole process. Machine: ${env}. Measured ${new Date().toISOString().slice(0, 10)}.

${table}
Reading it:
- A decorated handler runs its policy from a wrapper installed at bootstrap (\`@ballast/nestjs\` README, *Design
  decisions*), not through Nest's interceptor chain, whose price is the do-nothing row: any interceptor pays it.
- What \`@Resilient\` adds: core's \`run\` (the pipeline section), and one more route parameter (the request), which
  makes Nest resolve parameters through its async pipes step on a handler that had none (the \`@Req()\` row); a
  handler with parameters pays that step anyway.
- The peers run inside the handler, as a Nest user calls them; they do less than the \`@Resilient\` policy (no rate
  limit; opossum no retry either) and know nothing of the request (no client-disconnect signal).

Rerun alone: \`npx nx run-many -t build -p @ballast/nestjs && node tools/bench/src/handler.bench.mjs\` (env
\`BENCH_ROUNDS\`; \`BENCH_NODE=$(command -v node)\` for the project's Node 20); one variant: \`node tools/bench/src/route.probe.mjs
<variant> [express|fastify] [default|noctx|als]\`; instructions per request under callgrind, with the pieces an HTTP
request adds: \`node tools/bench/src/route-instructions.bench.mjs\`.`;
writeSection(cross ? 'handler-cross' : 'handler', body);
console.log(body);
