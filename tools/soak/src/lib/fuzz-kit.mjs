// Shared by the fuzzers: a per-case random stream (case i of seed s replays alone) and the prototype-pollution check.
import { testing } from './ballast.mjs';

/** The random stream of case `index` of a fuzz run seeded `seed` (mulberry32 of a mixed seed). */
export function rng(seed, index) {
  return testing.seededRandom((Math.imul(seed ^ 0x2545f491, 0x9e3779b1) + Math.imul(index, 0x85ebca6b)) | 0);
}

const PROTOTYPES = {
  Object: Object.prototype,
  Array: Array.prototype,
  Function: Function.prototype,
  String: String.prototype,
};

/** The own keys of the built-in prototypes a polluting merge would write to. */
export function prototypeSnapshot() {
  return Object.fromEntries(Object.entries(PROTOTYPES).map(([n, p]) => [n, Reflect.ownKeys(p).length]));
}

/** What changed since the snapshot: a new key on a prototype, or `({}).polluted` readable. */
export function prototypeProblems(snapshot) {
  const out = [];
  for (const [n, p] of Object.entries(PROTOTYPES))
    if (Reflect.ownKeys(p).length !== snapshot[n]) out.push(`${n}.prototype gained a key`);
  if ({}.polluted !== undefined || [].polluted !== undefined)
    out.push('({}).polluted is set: prototype pollution');
  return out;
}
