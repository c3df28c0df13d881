// Canaries: every invariant check is run once against a deliberate fault (the same `--inject` faults a person can
// use by hand) and must report it. A run whose canaries are not all caught fails: a check that cannot fail proves
// nothing. The quick slice runs the fast ones; a full run adds the unbounded-cardinality one.
import { cardinality } from './cardinality.mjs';
import { fuzzHeaders } from './fuzz-headers.mjs';
import { fuzzSpecs } from './fuzz-specs.mjs';
import { INJECTIONS, runInterleavings } from './interleavings.mjs';
import { processProblems } from './lib/probes.mjs';

async function interleavingCanary(seed, inject) {
  const before = processProblems.length;
  const r = await runInterleavings({ seed, until: Date.now() + 30_000, maxRuns: 2_000, inject });
  processProblems.splice(before); // the injected unhandled rejection is the canary's, not the run's
  return r.failure?.message.split('\n')[0];
}

function fuzzCanary(tally) {
  return tally.failures[0]?.problems[0];
}

/** Each canary and what caught it (undefined: not caught). */
export async function canaries({ seed, full }) {
  const out = [];
  for (const inject of Object.keys(INJECTIONS))
    out.push({ inject, caught: await interleavingCanary(seed, inject) });
  Object.prototype.polluted = 'injected'; // eslint-disable-line no-extend-native
  try {
    out.push({ inject: 'pollute', caught: fuzzCanary(fuzzSpecs({ seed, cases: 5 })) });
  } finally {
    delete Object.prototype.polluted;
  }
  out.push({ inject: 'slow', caught: fuzzCanary(fuzzSpecs({ seed, cases: 5, slow: true })) });
  out.push({
    inject: 'header-throw',
    caught: fuzzCanary(await fuzzHeaders({ seed, cases: 10, throwing: true })),
  });
  if (full) {
    const c = await cardinality({ routes: 60_000, maxKeysPerPolicy: 1e9 });
    out.push({ inject: 'unbounded', caught: c.problems[0] });
  }
  return out;
}
