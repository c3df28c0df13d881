// Instructions per call of the hot path, counted by valgrind's callgrind: repeatable for the same binary, inputs and
// environment whatever else the machine is doing, unlike the nanoseconds of pipeline.bench.mjs, so a regression
// shows up as a number. Each variant runs twice under callgrind (pipeline.child.mjs, the same warm-up, N1 and N2
// measured calls); the difference of the two totals over N2 − N1 is what one more call costs, start-up and warm-up
// cancelled out. On Node 24, the reference runtime (SPEC §12.5). Writes the "instructions" section of BENCHMARKS.md.
import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { referenceNode, writeSection } from './lib/report.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const child = path.join(here, 'pipeline.child.mjs');
const WARM = '20000';
const N1 = 20_000;
const N2 = 60_000;
// Each (N1, N2) pair is counted REPEATS times and the median per-call figure kept: the breaker's window and the
// timer queue still move with the real clock, which runs ~50× slower under valgrind (measured: ±5 % for a policy
// with a breaker, exactly repeatable for the bare await and a policy with no strategies).
const REPEATS = Number(process.env.BENCH_INSTRUCTION_REPEATS ?? 3);
// By default V8 compiles and collects on helper threads, so when optimised code is installed depends on thread
// scheduling: the counts of one variant moved by up to 2× between runs. `--predictable` runs that work on the main
// thread at the same points each time; with fixed seeds, the same run takes the same path.
const V8_FLAGS = ['--predictable', '--hash-seed=1', '--random-seed=1'];
const variants = [
  ['bare', 'bare `await fn()`'],
  ['bare-als-run', 'bare `await fn()` inside `AsyncLocalStorage.run` (one frame per call, Node itself)'],
  [
    'bare-als-scope',
    'bare `await fn()` in a frame entered as Ballast enters it (`enterWith` inside an `AsyncResource` scope)',
  ],
  ['ballast-none', 'Ballast `run()`, policy with no strategies'],
  ['ballast-retry', 'Ballast retry(3)'],
  ['ballast-timeout', 'Ballast timeout(1s)'],
  ['ballast-cb-timeout', 'Ballast breaker + timeout (opossum’s policy)'],
  ['ballast-cb-timeout-noctx', 'Ballast breaker + timeout, `ambientContext: false`'],
  ['ballast-rl-bh-cb-retry', 'Ballast rate limit + bulkhead + breaker + retry'],
  ['ballast-bulkhead-rl-cb-retry-timeout', 'Ballast rate limit + bulkhead + breaker + retry + timeout'],
  [
    'ballast-rl-cb-retry-timeout-noctx',
    'Ballast rate limit + breaker + retry + timeout, `ambientContext: false`',
  ],
  ['cockatiel-bulkhead-cb-retry', 'cockatiel `wrap(bulkhead(100,0), breaker, retry)`'],
  ['opossum-cb', 'opossum breaker, no timeout'],
  ['opossum-cb-timeout', 'opossum breaker, timeout 1000'],
];

const node = process.env.BENCH_NODE ?? referenceNode();
const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
const valgrind = spawnSync('valgrind', ['--version'], { encoding: 'utf8' });
if (valgrind.status !== 0) {
  console.error('instructions.bench: valgrind is not installed (apt-get install valgrind); skipped');
  process.exit(0);
}

/** Total instructions callgrind counted for one run of `variant` with `calls` measured calls. */
function instructions(variant, calls) {
  const run = spawnSync(
    'valgrind',
    [
      '--tool=callgrind',
      '--callgrind-out-file=/dev/null',
      // V8 writes and rewrites machine code in its heap: callgrind must notice (valgrind's advice for JITs).
      '--smc-check=all-non-file',
      node,
      ...V8_FLAGS,
      child,
      variant,
      String(calls),
      WARM,
    ],
    { encoding: 'utf8', maxBuffer: 1 << 26 },
  );
  const m = /Collected\s*:\s*(\d+)/.exec(run.stderr);
  if (run.status !== 0 || m === null)
    throw new Error(`callgrind failed for ${variant} (${run.status}):\n${run.stderr.slice(-2000)}`);
  return Number(m[1]);
}

const perCall = new Map();
const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
for (const [v] of variants) {
  const runs = [];
  for (let i = 0; i < REPEATS; i++) runs.push((instructions(v, N2) - instructions(v, N1)) / (N2 - N1));
  perCall.set(v, median(runs));
  process.stderr.write(
    `${v}: ${perCall.get(v).toFixed(0)} instructions per call (runs: ${runs.map((r) => r.toFixed(0)).join(', ')})\n`,
  );
}
const bare = perCall.get('bare');
let table = '| variant | instructions per call | over bare |\n|---|---:|---:|\n';
for (const [v, label] of variants)
  table += `| ${label} | ${perCall.get(v).toFixed(0)} | ${(perCall.get(v) - bare).toFixed(0)} |\n`;

const body = `## Instructions per call (callgrind)

Instructions one more sequential awaited call of \`async () => 1\` costs, counted by \`valgrind --tool=callgrind\` on
Node ${version} (V8 flags \`${V8_FLAGS.join(' ')}\`, so compilation and collection run at the same points
each time): each variant runs ${N1.toLocaleString('en')} and ${N2.toLocaleString('en')} measured calls after the
same ${Number(WARM).toLocaleString('en')}-call warm-up, in a fresh process each; the difference of the two totals
is divided by ${(N2 - N1).toLocaleString('en')}, and the median of ${REPEATS} such pairs is shown. Instruction counts do not depend on the machine's load, so this is the
figure to watch for regressions of the hot path; the nanoseconds are in the pipeline section. Measured
${new Date().toISOString().slice(0, 10)}.

${table}
${reading()}

Rerun alone: \`npm run build && node tools/bench/src/instructions.bench.mjs\` (valgrind from Debian's package).`;
writeSection('instructions', body);
console.log(body);

/** What the table says about the frame, from this run's counts. */
function reading() {
  const over = (v) => (perCall.get(v) - bare).toFixed(0);
  const frame = perCall.get('bare-als-run') - bare;
  const framed = perCall.get('ballast-cb-timeout') - perCall.get('ballast-cb-timeout-noctx');
  const cmp = (a, b) => (perCall.get(a) < perCall.get(b) ? 'fewer than' : 'more than');
  return `Reading it: Node's own \`AsyncLocalStorage.run\` costs ${frame.toFixed(0)} instructions per call here: on Node 24
each \`run\` builds a new context frame, a copy of the current one, on entry and another on the way out. Ballast
enters a call's frame with \`enterWith\` inside an \`AsyncResource\`'s scope, which puts the caller's frame back
without a copy: ${over('bare-als-scope')} instructions with a new resource, fewer when the resource is the timeout's timer
entry, which the call creates anyway (core's \`runInFrame\`). A call that something can abort — a timeout, a caller's
signal, a deadline, a hedge — enters one by default so that \`currentSignal()\` answers inside it (SPEC §12.1); that
is the difference between the two breaker + timeout rows (${framed.toFixed(0)} instructions). With the frame, by
default, Ballast's breaker + timeout costs ${over('ballast-cb-timeout')} instructions over bare, ${cmp('ballast-cb-timeout', 'opossum-cb-timeout')}
opossum's ${over('opossum-cb-timeout')}; without it ${over('ballast-cb-timeout-noctx')}. Rate limit + bulkhead + breaker +
retry costs ${over('ballast-rl-bh-cb-retry')}, against opossum's breaker alone ${over('opossum-cb')} and cockatiel's
\`wrap(bulkhead, breaker, retry)\` ${over('cockatiel-bulkhead-cb-retry')}. Instructions are not time: a clock read
is a few instructions that take ≈ 50–100 ns on this virtual machine (the pipeline section measures them).`;
}
