// One measurement in a fresh process: ns per sequential awaited call of one variant (fresh process, warm-up, then the measured loop).
import { setImmediate as turn } from 'node:timers/promises';
import { makeVariant } from './lib/pipeline-variants.mjs';
const [name, callsArg, warmArg] = process.argv.slice(2);
const CALLS = Number(callsArg ?? 200000);
const WARM = Number(warmArg ?? 50000);
// Review fix: `<variant>@turn` turns the event loop once after every call, as a server does between requests. The
// plain loop never leaves the microtask queue, so work deferred to the check phase — Ballast's timer queue arms from
// one setImmediate per turn — was paid once per measurement instead of once per request (≈ 60–100 ns per call here),
// while the peers' per-call setTimeout/clearTimeout was paid in full. Compare @turn rows with bare@turn.
const turnEach = name.endsWith('@turn');
const variant = turnEach ? name.slice(0, -'@turn'.length) : name;

const call = makeVariant(variant);
let sink = 0;
for (let i = 0; i < WARM; i++) {
  sink += await call();
  if (turnEach) await turn();
}
const t0 = process.hrtime.bigint();
for (let i = 0; i < CALLS; i++) {
  sink += await call();
  if (turnEach) await turn();
}
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
console.log(JSON.stringify({ variant: name, ns, heap }));
process.exit(0);
