// What a Nest route pays per request for `@Resilient`, without HTTP (issue 7): Nest's handler step called in a
// loop by interceptor.probe.mjs, a fresh process per (variant, round), interleaved rounds, medians. Steadier than
// the HTTP section, whose per-request spread on this machine is larger than the effect. Writes the "handler"
// section of BENCHMARKS.md.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CAN_PIN, machine, median, runChild, writeSection } from './lib/report.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const probe = path.join(here, 'interceptor.probe.mjs');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
// [variant, mode, label, calls]: the do-nothing interceptor is ~200× slower, so it gets fewer calls.
const VARIANTS = [
  ['none', 'default', 'undecorated handler', 200_000],
  ['noop', 'default', 'undecorated handler behind a do-nothing interceptor', 20_000],
  ['resilient', 'default', "`@Resilient('bench')`: rate limit + breaker + retry + timeout", 200_000],
  ['resilient', 'noctx', "`@Resilient('bench')`, `ambientContext: false`", 200_000],
  ['none', 'als', 'undecorated handler, in a process already using AsyncLocalStorage', 200_000],
  ['resilient', 'als', "`@Resilient('bench')`, in a process already using AsyncLocalStorage", 200_000],
];
const key = ([v, m]) => `${v}/${m}`;
const results = new Map(VARIANTS.map((v) => [key(v), []]));
const env = machine();
for (let round = 1; round <= ROUNDS; round++) {
  const order = round % 2 === 1 ? VARIANTS : [...VARIANTS].reverse();
  for (const v of order) results.get(key(v)).push(runChild(probe, [v[0], v[1], String(v[3])]).us);
  process.stderr.write(`round ${round}/${ROUNDS} done\n`);
}
const med = (k) => median(results.get(k));
const fmt = (us) => us.toFixed(2);
let table =
  '| variant | µs per request (median) | over the undecorated handler of its process (µs) |\n|---|---:|---:|\n';
for (const v of VARIANTS) {
  const base = v[1] === 'als' ? 'none/als' : 'none/default';
  const over = key(v) === base ? '' : fmt(med(key(v)) - med(base));
  table += `| ${v[2]} | ${fmt(med(key(v)))} | ${over} |\n`;
}
const body = `## Nest's handler step in isolation (\`@ballast/nestjs\`)

Nest's \`InterceptorsConsumer\` called in a loop as the router calls it, no HTTP, on the handler \`return { ok: true }\`
(\`tools/bench/src/interceptor.probe.mjs\`): a fresh process per (variant, round), ${ROUNDS} interleaved rounds,
medians${CAN_PIN ? ', pinned to one core (`taskset`)' : ''}. Same policy as the HTTP section. The undecorated rows
are the baselines: the default and \`ambientContext: false\` rows are measured against the one in a process without
AsyncLocalStorage (a \`@Resilient\` process turns it on, so that row includes Node 20's promise-hook tax on Nest's
own promises), the last row against the one in a process already using it. Machine: ${env}. Measured
${new Date().toISOString().slice(0, 10)}.

${table}
Reading it:
- A decorated handler runs its policy from a wrapper installed at bootstrap (\`@ballast/nestjs\` README, *Design
  decisions*), not through Nest's interceptor chain, whose price is the do-nothing row: any interceptor pays it.
- Over HTTP a decorated route also pays one more route parameter (the request), which makes Nest run its async
  pipes step on a handler that had no parameters; this probe calls the handler directly and does not include it.

Rerun alone: \`npx nx run-many -t build -p @ballast/nestjs && node tools/bench/src/handler.bench.mjs\` (env
\`BENCH_ROUNDS\`).`;
writeSection('handler', body);
console.log(body);
