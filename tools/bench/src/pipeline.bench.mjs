// Per-call overhead of Ballast's pipeline vs bare `await fn()` and vs cockatiel and opossum: a fresh process per
// (variant, round), so no variant inherits another's JIT state or heap; interleaved rounds, so drift on a shared
// machine falls on every variant alike; medians, and ratios to the bare await measured in the same round. The main
// section runs the children on Node 24, the reference runtime (SPEC §12.5); BENCH_NODE=<node> writes a cross-check
// section for another Node (Node 20 in BENCHMARKS.md). Writes the "pipeline" sections of BENCHMARKS.md.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { CAN_PIN, machine, median, referenceNode, runChild, writeSection } from './lib/report.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const child = path.join(here, 'pipeline.child.mjs');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
const CALLS = process.env.BENCH_CALLS ?? '200000';
const REFERENCE = referenceNode();
const CHILD_NODE = process.env.BENCH_NODE ?? REFERENCE;
const CHILD_NODE_VERSION = execFileSync(CHILD_NODE, ['--version'], { encoding: 'utf8' }).trim();
/** Whether the children's AsyncLocalStorage uses context frames (Node 24), where Ballast enters frames without run(). */
const CONTEXT_FRAMES =
  execFileSync(
    CHILD_NODE,
    ['-p', "!('_propagate' in require('node:async_hooks').AsyncLocalStorage.prototype)"],
    { encoding: 'utf8' },
  ).trim() === 'true';
const variants = [
  ['bare', 'bare `await fn()`'],
  // SPEC §14.6's rows: rate limit + bulkhead + breaker + retry, then the same plus a timeout, against the peers.
  ['ballast-rl-bh-cb-retry', 'Ballast rate limit + bulkhead(100) + breaker + retry'],
  ['cockatiel-bulkhead-cb-retry', 'cockatiel `wrap(bulkhead(100,0), breaker, retry)`'],
  ['opossum-cb', 'opossum breaker, no timeout'],
  ['bare-als', 'bare `await fn()` in a process already using AsyncLocalStorage'],
  ['bare-now2', 'bare `await fn()` plus two `performance.now()` reads (Node’s price of reading the clock)'],
  ['bare-als-run', 'bare `await fn()` inside `AsyncLocalStorage.run` (Node’s price of one frame per call)'],
  [
    'bare-als-scope',
    'bare `await fn()` in a frame entered as Ballast enters it (`enterWith` inside an `AsyncResource` scope)',
  ],
  ['ballast-none', 'Ballast `run()`, policy with no strategies'],
  ['ballast-retry', 'Ballast retry(3)'],
  ['ballast-breaker', 'Ballast circuit breaker'],
  ['ballast-timeout', 'Ballast timeout(1s)'],
  ['ballast-rl-cb-retry-timeout', 'Ballast rate limit + breaker + retry + timeout'],
  [
    'ballast-rl-cb-retry-timeout-noctx',
    'Ballast rate limit + breaker + retry + timeout, `ambientContext: false`',
  ],
  ['ballast-rl-cb-retry-noctx', 'Ballast rate limit + breaker + retry (no timeout), `ambientContext: false`'],
  [
    'ballast-rl-cb-retry-timeout-signal',
    'Ballast rate limit + breaker + retry + timeout, the function reads `ctx.signal`',
  ],
  ['ballast-cb-timeout', 'Ballast breaker + timeout (opossum’s policy)'],
  ['ballast-cb-timeout-noctx', 'Ballast breaker + timeout, `ambientContext: false`'],
  ['ballast-bulkhead-rl-cb-retry-timeout', 'Ballast bulkhead(100) + rate limit + breaker + retry + timeout'],
  ['ballast-hedge', 'Ballast hedge (delay 1s, 2 attempts)'],
  ['cockatiel-cb-retry-timeout', 'cockatiel `wrap(breaker, retry, timeout)`'],
  ['cockatiel-bulkhead-cb-retry-timeout', 'cockatiel `wrap(bulkhead(100,0), breaker, retry, timeout)`'],
  ['cockatiel-bulkhead', 'cockatiel `bulkhead(100, 0)`'],
  ['opossum-cb-timeout', 'opossum breaker, timeout 1000'],
  [
    'ballast-rl-cb-retry-timeout-als',
    'Ballast rate limit + breaker + retry + timeout, in a process already using AsyncLocalStorage',
  ],
  ['ballast-cb-timeout-als', 'Ballast breaker + timeout, in a process already using AsyncLocalStorage'],
  ['opossum-cb-timeout-als', 'opossum breaker, timeout 1000, in a process already using AsyncLocalStorage'],
  // Review fix: one event-loop turn per call (pipeline.child.mjs `@turn`), as a server between requests; these rows'
  // ratio and overhead are against bare@turn of the same round. Without them Ballast's per-turn timer-queue check
  // (a setImmediate) is amortized over the whole loop while opossum's per-call timer is not.
  ['bare@turn', 'bare `await fn()`, one event-loop turn per call'],
  ['ballast-rl-cb-retry-timeout@turn', 'Ballast rate limit + breaker + retry + timeout, one turn per call'],
  [
    'ballast-rl-cb-retry-timeout-noctx@turn',
    'Ballast rate limit + breaker + retry + timeout, `ambientContext: false`, one turn per call',
  ],
  ['ballast-cb-timeout-noctx@turn', 'Ballast breaker + timeout, `ambientContext: false`, one turn per call'],
  ['opossum-cb-timeout@turn', 'opossum breaker, timeout 1000, one turn per call'],
];
/** The baseline of a row: the bare await measured the same way (with or without a turn per call). */
const baseOf = (v) => (v.endsWith('@turn') ? 'bare@turn' : 'bare');

const env = machine(CHILD_NODE_VERSION);
// BENCH_NODE=<another node binary>: the same measurements on that Node version, in a section of their own.
const cross = CHILD_NODE !== REFERENCE;
// PIPELINE_RESULTS=<file>: write the section from the JSON line a run printed last, without measuring again.
const saved = process.env.PIPELINE_RESULTS
  ? JSON.parse(fs.readFileSync(process.env.PIPELINE_RESULTS, 'utf8').trim().split('\n').at(-1))
  : undefined;
const { results, ratios, heap, machineLine, date } = saved
  ? {
      results: new Map(Object.entries(saved.results)),
      ratios: new Map(Object.entries(saved.ratios)),
      heap: saved.heap,
      machineLine: saved.machineLine,
      date: saved.date,
    }
  : measure();

function measure() {
  const results = new Map(variants.map(([v]) => [v, []]));
  const ratios = new Map(variants.map(([v]) => [v, []]));
  for (let round = 1; round <= ROUNDS; round++) {
    const bareStart = runChild(child, ['bare', CALLS], [], CHILD_NODE).ns;
    const row = {};
    // Review fix: the order alternates between rounds (it was the same every round), so a drift within a round (load
    // from other users, thermal) does not fall on the same variants every time.
    const middle = variants.slice(1);
    for (const [v] of round % 2 === 1 ? middle : [...middle].reverse())
      row[v] = runChild(child, [v, CALLS], [], CHILD_NODE).ns;
    const bareEnd = runChild(child, ['bare', CALLS], [], CHILD_NODE).ns;
    const bare = (bareStart + bareEnd) / 2;
    results.get('bare').push(bare);
    ratios.get('bare').push(1);
    for (const [v, ns] of Object.entries(row)) {
      results.get(v).push(ns);
      ratios.get(v).push(ns / (baseOf(v) === 'bare' ? bare : row[baseOf(v)]));
    }
    process.stderr.write(`round ${round}/${ROUNDS} done\n`);
  }
  const heap = {};
  for (const v of ['ballast-rl-cb-retry-timeout', 'ballast-bulkhead-rl-cb-retry-timeout']) {
    heap[v] = runChild(child, [v, '100000', '20000', '--heap'], ['--expose-gc'], CHILD_NODE).heap;
  }
  return { results, ratios, heap, machineLine: env, date: new Date().toISOString().slice(0, 10) };
}

let table =
  '| variant | ns/call (median) | ratio vs bare (median) | overhead over bare (ns) |\n|---|---:|---:|---:|\n';
for (const [v, label] of variants) {
  const ns = median(results.get(v));
  const over = ns - median(results.get(baseOf(v)));
  table += `| ${label} | ${ns.toFixed(0)} | ${median(ratios.get(v)).toFixed(2)} | ${over.toFixed(0)} |\n`;
}
const heapLine = `Heap growth over 10⁶ further calls after a forced GC (\`--expose-gc\`): ${Object.entries(
  heap,
)
  .map(([v, b]) => `${v}: ${(b / 1024).toFixed(0)} KiB`)
  .join('; ')}.`;
/** Issue 4's goal, read off this run's medians: Ballast's full policy against each peer's overhead. */
const over = (v) => median(results.get(v)) - median(results.get(baseOf(v)));
const verdict = (v, label) => {
  const ours = over(v);
  const opossum = over('opossum-cb-timeout');
  const cockatiel = over('cockatiel-cb-retry-timeout');
  const cmp = (peer) => (ours < peer ? 'below' : 'above');
  return `${label}: ${ours.toFixed(0)} ns, ${cmp(opossum)} opossum's breaker + timeout (${opossum.toFixed(0)} ns) and ${cmp(cockatiel)} cockatiel's \`wrap\` (${cockatiel.toFixed(0)} ns)`;
};
const mark = (ok) => (ok ? 'met' : 'NOT met');
const ns = (v) => `${over(v).toFixed(0)} ns`;
const cmpNs = (a, b) => (over(a) < over(b) ? 'costs less than' : 'costs more than');
const goal = `SPEC §14.6's cost targets (default configuration; Node 24 is the reference, Node 20 with \`ambientContext: false\`), in this run:
- rate limit + bulkhead + breaker + retry: ${ns('ballast-rl-bh-cb-retry')} over bare, against cockatiel's \`wrap(bulkhead, breaker, retry)\` ${ns('cockatiel-bulkhead-cb-retry')} and opossum's breaker ${ns('opossum-cb')}; below both and ≤ 300 ns: ${mark(over('ballast-rl-bh-cb-retry') < Math.min(over('cockatiel-bulkhead-cb-retry'), over('opossum-cb')) && over('ballast-rl-bh-cb-retry') <= 300)};
- the same plus a timeout: ${ns('ballast-bulkhead-rl-cb-retry-timeout')}, against opossum's breaker + timeout ${ns('opossum-cb-timeout')}; below it and ≤ 500 ns: ${mark(over('ballast-bulkhead-rl-cb-retry-timeout') < over('opossum-cb-timeout') && over('ballast-bulkhead-rl-cb-retry-timeout') <= 500)};
- with \`ambientContext: false\` (the Node 20 target): rate limit + breaker + retry ${ns('ballast-rl-cb-retry-noctx')}, + timeout ${ns('ballast-rl-cb-retry-timeout-noctx')}.
- What Node itself charges in these rows, measured in the same run: the two clock reads a call with a breaker or a
  rate limit makes (its start and its end) ${ns('bare-now2')}; the AsyncLocalStorage frame a call with a timeout
  enters by default ${ns(CONTEXT_FRAMES ? 'bare-als-scope' : 'bare-als-run')} (\`AsyncLocalStorage.run\`, which
  Ballast ${CONTEXT_FRAMES ? 'no longer uses on this runtime' : 'uses on this runtime'}: ${ns('bare-als-run')}).
Earlier rows, for comparison with past runs:
- ${verdict('ballast-rl-cb-retry-timeout', 'Ballast rate limit + breaker + retry + timeout, default')};
- ${verdict('ballast-cb-timeout', "Ballast breaker + timeout (opossum's own policy), default")}.`;
const body = cross ? crossBody() : mainBody();
writeSection(cross ? 'pipeline-cross' : 'pipeline', body);
console.log(body);
// The run's raw figures, last, for PIPELINE_RESULTS.
if (!saved)
  console.log(
    JSON.stringify({
      results: Object.fromEntries(results),
      ratios: Object.fromEntries(ratios),
      heap,
      machineLine,
      date,
    }),
  );

function crossBody() {
  return `## Pipeline overhead on Node ${CHILD_NODE_VERSION} (cross-check)

The pipeline section's measurements, same method and variants, with the child processes on Node ${CHILD_NODE_VERSION}
instead of the reference Node 24 (SPEC §12.5). ${CALLS} calls per measurement, ${ROUNDS} interleaved rounds,
medians${CAN_PIN ? ', pinned to one core' : ''}. Machine: ${machineLine}. Measured ${date}.

${table}
${heapLine}

${goal}

Reading it: on Node 20, AsyncLocalStorage runs on promise hooks, so once any frame is entered every promise of the
process pays (compare the two bare rows); SPEC §14.6's Node 20 target is therefore stated with
\`ambientContext: false\`. A call that nothing can abort enters no frame at all (core README, *Context*).

Rerun: \`npm run build && BENCH_NODE=$(command -v node) node tools/bench/src/pipeline.bench.mjs\` (the project's Node 20).`;
}

function mainBody() {
  return `## Pipeline overhead (\`@ballast/core\` vs peers)

Sequential awaited calls of \`async () => 1\`; ${CALLS} calls per measurement after a warm-up, a fresh Node process
per (variant, round)${CAN_PIN ? ', pinned to one core (`taskset`)' : ''}, ${ROUNDS} interleaved rounds, medians; the ratio is
against the bare await measured at the start and end of the same round. Machine: ${machineLine}. Measured
${date}.

${table}
${heapLine}

${goal}

Reading it:
- The pipeline is written in continuation-passing style: with in-process stores every admission step is
  synchronous, and a call adds two promises to the user's own — the one the caller awaits and one reaction on the
  user's promise. A timeout adds an entry to the shared timer queue, which arms its clock timer in the event loop's
  check phase (one \`setImmediate\` for the whole burst here), so a call that settles within the turn, as here,
  never creates a clock timer. The entry is an \`AsyncResource\` (≈ 10 ns, ≈ 80 ns once async hooks are on), so
  a retry or fallback after a timeout runs in its own request's AsyncLocalStorage context.
- The frame. On Node 24 AsyncLocalStorage keeps its stores in an immutable context frame, and
  \`AsyncLocalStorage.run\` builds two per call: a copy of the current frame with the new store on the way in,
  and a copy of that one with the old store put back on the way out. Ballast enters a call's frame with
  \`enterWith\` inside an \`AsyncResource\`'s scope instead (the timeout's timer entry, created anyway): the scope
  ends by putting the caller's frame back as it was, so only the first copy is built (compare the two rows of Node's
  price; the instructions section counts it). The caller gets its whole context back, every other
  AsyncLocalStorage's store included (core's \`run-in-frame.spec.ts\`). On Node 20 AsyncLocalStorage keeps stores
  on async resources, \`run\` copies nothing, and Ballast uses it.
- On Node 20 the first use of AsyncLocalStorage in a process turns on promise hooks that make every promise of
  the process slower (compare the two bare rows). By default Ballast runs each attempt in an AsyncLocalStorage
  frame so \`currentSignal()\`, \`remainingTime()\` and \`currentCriticality()\` work, so in a process where it
  is the only user of AsyncLocalStorage it pays that tax alone; \`ambientContext: false\` skips the frame. Any
  service that already uses OpenTelemetry context, a request-scoped logger or Nest's request scope pays the tax
  anyway: the three "in a process already using AsyncLocalStorage" rows compare Ballast and opossum on that
  equal footing.
- opossum's policy is a breaker and a timeout; the "breaker + timeout" rows are Ballast's equivalent, the
  "rate limit + breaker + retry + timeout" rows do more.
- The "one turn per call" rows turn the event loop after every call, as a server does between requests, and are
  compared with the bare await measured the same way. In the other rows the loop never leaves the microtask queue,
  so the timer queue's check (one \`setImmediate\` per turn) is paid once per measurement, not once per call.
- Where SPEC §14.6's rows stand, and what was tried. The nanoseconds of one run move by ± 15 % between runs on this
  shared virtual machine (opossum's own rows did, with nothing changed in it), so the repeatable comparison is the
  instructions section. Rate limit + bulkhead + breaker + retry (${ns('ballast-rl-bh-cb-retry')}) ${cmpNs('ballast-rl-bh-cb-retry', 'opossum-cb')} opossum's breaker
  alone and ${cmpNs('ballast-rl-bh-cb-retry', 'cockatiel-bulkhead-cb-retry')} cockatiel's \`wrap\`; the 300 ns bound includes the two clock reads such a call makes
  (${ns('bare-now2')} here; a breaker must time its outcome, a rate limit its refill), and what is left is Ballast's own work.
  With a timeout, against opossum's breaker + timeout (${ns('opossum-cb-timeout')}): rate limit + breaker + retry +
  timeout ${ns('ballast-rl-cb-retry-timeout')}, and with the bulkhead too ${ns('ballast-bulkhead-rl-cb-retry-timeout')} (cockatiel's bulkhead alone
  costs ${ns('cockatiel-bulkhead')}). Tried and kept: a frame entered without
  \`AsyncLocalStorage.run\`'s second copy (above; ≈ 2,800 instructions fewer per call with a timeout in this loop, where \`run\` also left its exit frame behind
  for the next call to copy, ≈ 940 per decorated Nest route); no frame for a
  call nothing can abort; no clock read at the start of a call whose policy reads no clock; one clock read shared by
  every admission stage; result objects reused by the in-memory stores; continuation-passing instead of \`async\`
  layers. Tried and dropped: private class fields replaced by plain ones in the per-call objects (no change in
  instructions). Considered and not done: a clock cached per event-loop turn (a long microtask chain would see time
  stand still: a breaker could stay open or a bucket never refill while work runs).

Rerun alone: \`npm run build && node tools/bench/src/pipeline.bench.mjs\` (env \`BENCH_ROUNDS\`, \`BENCH_CALLS\`).
The cockatiel \`timeout\` creates an AbortController per call and aborts it on return (~13 µs on Node 20, measured in a probe); Ballast creates the signal only when \`ctx.signal\` is read and never aborts on
success: the row whose function reads \`ctx.signal\` is what a function that passes it on pays. The machine is shared and noisy: trust ratios and medians, not single numbers.`;
}
