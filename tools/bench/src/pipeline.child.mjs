// One measurement in a fresh process: ns per sequential awaited call of one variant (peer-overhead.md method).
import { makeVariant } from './lib/pipeline-variants.mjs';
const [variant, callsArg, warmArg] = process.argv.slice(2);
const CALLS = Number(callsArg ?? 200000);
const WARM = Number(warmArg ?? 50000);

const call = makeVariant(variant);
let sink = 0;
for (let i = 0; i < WARM; i++) sink += await call();
const t0 = process.hrtime.bigint();
for (let i = 0; i < CALLS; i++) sink += await call();
const ns = Number(process.hrtime.bigint() - t0) / CALLS;
if (sink !== WARM + CALLS) throw new Error(`variant ${variant} returned wrong values`);
let heap;
if (process.argv.includes('--heap') && global.gc) {
  global.gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < 1_000_000; i++) await call();
  global.gc();
  heap = process.memoryUsage().heapUsed - before;
}
console.log(JSON.stringify({ variant, ns, heap }));
process.exit(0);
