// One sustained run in a fresh process (see sustained.bench.mjs): sequential awaited calls of one variant for SECONDS,
// turning the event loop (setImmediate) every 1,000 calls so a library's periodic work runs as it would in a
// server. Prints the calls completed in each 1 s slice and the largest heapUsed seen.
import { setImmediate as turn } from 'node:timers/promises';
import { makeVariant } from './lib/pipeline-variants.mjs';

const [variant, secondsArg] = process.argv.slice(2);
const SECONDS = Number(secondsArg ?? 15);
const call = makeVariant(variant);
const slices = new Array(SECONDS).fill(0);
let maxHeap = 0;
let sink = 0;
let calls = 0;
const t0 = performance.now();
for (;;) {
  for (let i = 0; i < 1000; i++) sink += await call();
  calls += 1000;
  await turn();
  const elapsed = performance.now() - t0;
  const slice = Math.floor(elapsed / 1000);
  if (slice >= SECONDS) break;
  slices[slice] += 1000;
  if (calls % 20_000 === 0) maxHeap = Math.max(maxHeap, process.memoryUsage().heapUsed);
}
if (sink !== calls) throw new Error(`variant ${variant} returned wrong values`);
maxHeap = Math.max(maxHeap, process.memoryUsage().heapUsed);
console.log(JSON.stringify({ variant, slices, maxHeap }));
process.exit(0);
