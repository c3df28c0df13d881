// Sustained load, as a server runs: each variant runs sequential
// awaited calls for 15 s in a fresh process, yielding to the event loop every 1,000 calls, so work a library
// schedules on timers (opossum's 1 s snapshots, its rolling window's rotation) and the garbage its per-call
// bookkeeping leaves behind show up. Interleaved rounds, medians. On Node 24, the reference runtime (SPEC §12.5);
// BENCH_NODE=<node> measures on that Node instead. Writes the "sustained" (or "sustained-cross") section of BENCHMARKS.md.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CAN_PIN, machine, measuredNode, median, runChild, writeSection } from './lib/report.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const child = path.join(here, 'sustained.child.mjs');
const ROUNDS = Number(process.env.BENCH_SUSTAINED_ROUNDS ?? 3);
const SECONDS = 15;
/** The steady state: seconds 11–15, once opossum's 10 s rolling window is full. */
const STEADY_FROM = 10;

const variants = [
  ['bare', 'bare `await fn()`'],
  ['ballast-cb-timeout', 'Ballast breaker + timeout (opossum’s policy)'],
  ['ballast-cb-timeout-noctx', 'Ballast breaker + timeout, `ambientContext: false`'],
  ['ballast-rl-cb-retry-timeout', 'Ballast rate limit + breaker + retry + timeout'],
  ['opossum-cb-timeout', 'opossum breaker, timeout 1000'],
  ['opossum-cb-timeout-lean', 'opossum breaker, timeout 1000, percentiles and snapshots off'],
  ['cockatiel-cb-retry-timeout', 'cockatiel `wrap(breaker, retry, timeout)`'],
];

const steady = new Map(variants.map(([v]) => [v, []]));
const worst = new Map(variants.map(([v]) => [v, []]));
const heaps = new Map(variants.map(([v]) => [v, []]));
const { node, version, cross } = measuredNode();
const env = machine(version);
for (let round = 1; round <= ROUNDS; round++) {
  for (const [v] of variants) {
    const { slices, maxHeap } = runChild(child, [v, String(SECONDS)], [], node);
    steady.get(v).push(median(slices.slice(STEADY_FROM)));
    worst.get(v).push(Math.min(...slices.slice(1)));
    heaps.get(v).push(maxHeap);
    process.stderr.write(`round ${round}/${ROUNDS}: ${v} done\n`);
  }
}

const bareNs = 1e9 / median(steady.get('bare'));
let table =
  '| variant | steady calls/s (median) | ns/call | overhead over bare (ns) | worst 1 s slice (calls) | max heapUsed (MiB) |\n' +
  '|---|---:|---:|---:|---:|---:|\n';
for (const [v, label] of variants) {
  const rate = median(steady.get(v));
  const ns = 1e9 / rate;
  table +=
    `| ${label} | ${Math.round(rate).toLocaleString('en-US')} | ${ns.toFixed(0)} | ` +
    `${v === 'bare' ? 0 : (ns - bareNs).toFixed(0)} | ${Math.min(...worst.get(v)).toLocaleString('en-US')} | ` +
    `${(Math.max(...heaps.get(v)) / 2 ** 20).toFixed(0)} |\n`;
}

/** How opossum without percentiles and snapshots compares with a Ballast row, in this run. */
const overOf = (v) => 1e9 / median(steady.get(v)) - bareNs;
const than = (v) => (overOf('opossum-cb-timeout-lean') < overOf(v) ? 'less' : 'more');

const body = `## Sustained load (\`@ballast/core\` vs peers)${cross ? ` on Node ${version} (cross-check)` : ''}

The pipeline section's loop, kept up for ${SECONDS} s per variant and turning the event loop every 1,000 calls, as a
server does between requests: work a library schedules on timers, and the
garbage its per-call bookkeeping leaves, then count. Steady calls/s is the median 1 s slice of seconds
${STEADY_FROM + 1}–${SECONDS}, once a 10 s rolling window is full; a fresh Node process per (variant, round)${CAN_PIN ? ', pinned to one core' : ''}, ${ROUNDS}
interleaved rounds, medians; the worst slice and the heap are the extremes over all rounds. Machine: ${env}. Measured
${new Date().toISOString().slice(0, 10)}.

${table}
Reading it: the pipeline section's short loops end before a peer's periodic work runs. Held for ${SECONDS} s:
- opossum pushes every call's latency into its 10 s window, even with percentiles off, so its heap grows with the
  call rate (the max heapUsed column); by default it also sorts the whole window once a second for its snapshot,
  and its rate falls the longer it runs, with whole seconds in which almost nothing completes (the worst slice).
- Turning opossum's percentiles and snapshots off removes the sort but not the memory.
- Ballast's breaker keeps fixed-size buckets of counts, and nothing in its pipeline runs on a timer while calls
  succeed: its heap stays flat. Its default rows include the AsyncLocalStorage frame, as in the pipeline section;
  opossum with percentiles and snapshots off costs ${than('ballast-cb-timeout')} than Ballast's default breaker + timeout
  and ${than('ballast-cb-timeout-noctx')} than its \`ambientContext: false\` row, and pays for it with its heap.
- ${SECONDS} s of ≈ 1M calls a second on one breaker is opossum's worst case: its window holds every call's latency.
  At a few thousand calls a second per breaker the sort and the heap are proportionally smaller.
- Absolute figures move with the machine's state between sections and runs; compare rows within one section.

Rerun alone: \`npm run build && node tools/bench/src/sustained.bench.mjs\` (env \`BENCH_SUSTAINED_ROUNDS\`; about
${Math.ceil((variants.length * SECONDS * ROUNDS) / 60)} minutes; Node 24, or \`BENCH_NODE=$(command -v node)\` for the
project's Node 20).`;
writeSection(cross ? 'sustained-cross' : 'sustained', body);
console.log(body);
