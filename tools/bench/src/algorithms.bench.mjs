// Per-sample cost of the six algorithm packages (@ballast/p2-quantile, token-bucket, aimd, gradient2, codel,
// sre-throttle), measured with mitata on their built `dist`, plus an allocation check (heap growth per operation
// with GC forced before and after). Writes the "algorithms" section of BENCHMARKS.md.
//
// Rerun alone:
//   npx nx run-many -t build -p @ballast/p2-quantile @ballast/token-bucket @ballast/aimd @ballast/gradient2 \
//     @ballast/codel @ballast/sre-throttle && node tools/bench/src/algorithms.bench.mjs
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { bench, do_not_optimize, run } from 'mitata';
import { P2Quantile, WindowedP2Quantile } from '@ballast/p2-quantile';
import { TokenBucket } from '@ballast/token-bucket';
import { AimdLimit } from '@ballast/aimd';
import { Gradient2Limit } from '@ballast/gradient2';
import { CoDelQueue, Criticality } from '@ballast/codel';
import { AdaptiveThrottle } from '@ballast/sre-throttle';
import { machine, writeSection } from './lib/report.mjs';

/** The allocation check needs a forced GC and a young generation big enough that no scavenge hides garbage. */
const NODE_FLAGS = ['--expose-gc', '--min-semi-space-size=64', '--max-semi-space-size=64'];
if (typeof globalThis.gc !== 'function') {
  execFileSync(process.execPath, [...NODE_FLAGS, fileURLToPath(import.meta.url)], { stdio: 'inherit' });
  process.exit(0);
}

/**
 * 4096 pre-drawn lognormal latencies (ms, median 20) and coin flips, so no benchmark measures the random source.
 * They are held in generic arrays (PACKED_ELEMENTS, i.e. already-boxed numbers): V8 boxes a raw double passed to a
 * call that is not inlined, and that allocation would be the harness's, not the algorithm's. Times are integers.
 */
const SIZE = 4096;
const MASK = SIZE - 1;
const latencies = [];
const coins = [];
{
  let a = 42;
  const random = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  for (let i = 0; i < SIZE; i++) {
    const normal = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
    latencies.push(20 * Math.exp(0.5 * normal));
    coins.push(random());
  }
  (latencies.push('generic'), latencies.pop()); // elements kind → PACKED_ELEMENTS, for good
  (coins.push('generic'), coins.pop());
}

/** Each case: a label, the operation measured, and a factory returning one call of it on fresh, warm state. */
const cases = [
  [
    'P2Quantile.add (p = 0.99)',
    'add',
    () => {
      const q = new P2Quantile(0.99);
      let i = 0;
      return () => q.add(latencies[i++ & MASK]);
    },
  ],
  [
    'WindowedP2Quantile.add (p = 0.99, window 512)',
    'add',
    () => {
      const q = new WindowedP2Quantile(0.99);
      let i = 0;
      return () => q.add(latencies[i++ & MASK]);
    },
  ],
  [
    'TokenBucket.tryTake (900/s, called 1000/s)',
    'tryTake',
    () => {
      const bucket = new TokenBucket({ permits: 900, per: 1000 });
      let now = 0;
      return () => bucket.tryTake(++now);
    },
  ],
  [
    'TokenBucket.tryTake (empty bucket, rejected)',
    'tryTake',
    () => {
      const bucket = new TokenBucket({ permits: 1, per: 1e12, burst: 1 });
      let now = 0;
      bucket.tryTake(0);
      return () => bucket.tryTake(++now);
    },
  ],
  [
    'AimdLimit.onSample (threshold)',
    'onSample',
    () => {
      const aimd = new AimdLimit({ maxConcurrency: 100, latencyThreshold: 40 });
      let i = 0;
      return () => aimd.onSample(latencies[i & MASK], i++);
    },
  ],
  [
    'AimdLimit.onSample (p90 quantile)',
    'onSample',
    () => {
      const aimd = new AimdLimit({ maxConcurrency: 100, latencyThreshold: 40, latencyQuantile: 0.9 });
      let i = 0;
      return () => aimd.onSample(latencies[i & MASK], i++);
    },
  ],
  [
    'Gradient2Limit.onSample',
    'onSample',
    () => {
      const g = new Gradient2Limit({ maxConcurrency: 200, minConcurrency: 10 });
      let i = 0;
      return () => g.onSample({ rtt: latencies[i++ & MASK], inflight: g.limit });
    },
  ],
  [
    'CoDelQueue push + pop, 64 waiting (FIFO, target set)',
    'push+pop',
    () => {
      // Time unit 1 per operation: 64 waiters sojourn 64 < target 500 < interval 10 000, so nothing is shed.
      const queue = new CoDelQueue({ maxSize: 1024, target: 500, interval: 10_000 });
      let now = 0;
      for (let i = 0; i < 64; i++) queue.push(i, now);
      return () => {
        now++;
        queue.push(now, now);
        return queue.pop(now);
      };
    },
  ],
  [
    'CoDelQueue push + pop, 64 waiting (prioritized, adaptive LIFO)',
    'push+pop',
    () => {
      const queue = new CoDelQueue({
        maxSize: 1024,
        target: 500,
        interval: 10_000,
        adaptiveLifo: true,
        prioritized: true,
      });
      let now = 0;
      for (let j = 0; j < 64; j++) queue.push(j, now, j & 3);
      return () => {
        now++;
        queue.push(now, now, now & 3);
        return queue.pop(now);
      };
    },
  ],
  [
    'AdaptiveThrottle.shouldReject + record (30 % accepted)',
    'shouldReject+record',
    () => {
      const throttle = new AdaptiveThrottle();
      let i = 0;
      return () => {
        const now = i;
        const coin = coins[i++ & MASK];
        if (!throttle.shouldReject(now, coin)) throttle.record(now, coin < 0.3);
        return undefined;
      };
    },
  ],
];

for (const [label, , make] of cases) {
  const op = make();
  bench(label, () => do_not_optimize(op()));
}
const { benchmarks } = await run({ format: 'mitata', colors: false });

/**
 * Bytes allocated per operation: heap growth over 10⁵ calls on warm state, after a forced GC, with a 64 MiB young
 * generation so that no scavenge runs during the loop (up to ~600 bytes/op would be seen).
 */
function bytesPerOp(make) {
  const op = make();
  for (let i = 0; i < 100_000; i++) op(); // warm up: optimised code, steady-state buffers
  globalThis.gc();
  const before = process.memoryUsage().heapUsed;
  const n = 100_000;
  let sink;
  for (let i = 0; i < n; i++) sink = op();
  const after = process.memoryUsage().heapUsed;
  do_not_optimize(sink);
  return Math.max(0, (after - before) / n);
}

const env = machine();
const rows = cases.map(([label, , make], k) => {
  const stats = benchmarks[k].runs[0].stats;
  return `| ${label} | ${stats.avg.toFixed(1)} | ${stats.p50.toFixed(1)} | ${stats.p99.toFixed(1)} | ${bytesPerOp(make).toFixed(2)} |`;
});

writeSection(
  'algorithms',
  `## Algorithms (per-sample operations)

mitata 1.0.34 on the built packages; each row is one call of the operation on warm state, inputs drawn in advance
(lognormal latencies, median 20 ms). "bytes/op" is the heap growth over 10⁵ further calls after a forced GC, in a
process with a 64 MiB young generation so that no collection runs during the loop: ~0 means the operation allocates
nothing. Machine: ${env}. Measured ${new Date().toISOString().slice(0, 10)}.

| operation | avg ns | p50 ns | p99 ns | bytes/op |
|---|---:|---:|---:|---:|
${rows.join('\n')}

Rerun alone: \`npx nx run-many -t build -p @ballast/p2-quantile @ballast/token-bucket @ballast/aimd @ballast/gradient2
@ballast/codel @ballast/sre-throttle && node tools/bench/src/algorithms.bench.mjs\`. The machine is shared
and noisy: compare rows measured together, not across runs.`,
);
console.log('\nwrote the "algorithms" section of BENCHMARKS.md');
