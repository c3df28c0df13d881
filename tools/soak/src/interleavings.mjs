// Model-based interleaving runs (fast-check commands) over the real executor: after every run, once the calls have
// been given time to settle, the invariants below must hold. Runs go in batches of fc.check, each batch from its own
// seed, until the time box ends; a failure prints the batch seed and fast-check's path, which replay it alone.
import fc from 'fast-check';
import { buildWorld, commandsArb, worldArb } from './lib/scenario.mjs';
import { abortListeners, blame, processProblems, slotProblems, trackSlots } from './lib/probes.mjs';

/** Lets the run's calls settle: clock steps until every call has (or 10 s of fake time have passed). */
async function drain(real) {
  for (let i = 0; i < 400 && real.calls.some((c) => c.settles === 0); i++) await real.fake.advance(25);
  await Promise.allSettled(real.admin.pending);
  await real.fake.advance(0);
}

/**
 * Deliberate faults (`--inject=<name>`), each one of the leaks an invariant below exists to catch, applied after the
 * calls settled: a run with one must fail, which proves the check can fail.
 */
export const INJECTIONS = {
  'leak-listener': (real) => real.calls[0]?.controller.signal.addEventListener('abort', () => {}),
  'leak-timer': (real) => real.clock.setTimeout(() => {}, 10_000),
  'leak-slot': (_real, slots) => [...slots.bulkheads][0]?.acquire(2, undefined),
  unhandled: () => void Promise.reject(new Error('injected unhandled rejection')),
  // set in buildWorld's stores: half-open probe records are swallowed, as if Ballast never reported them
  'drop-lease-record': () => {},
};

/** Every invariant of one run; an empty list when they all hold. */
async function problemsOf(real, slots, inject) {
  INJECTIONS[inject]?.(real, slots);
  const out = [];
  const { calls, clock, fake, resilience, faults, events } = real;
  calls.forEach((c, i) => {
    if (c.settles !== 1) out.push(`call ${i} settled ${c.settles} times`);
    if (c.fallbacks > 1) out.push(`call ${i}: its fallback ran ${c.fallbacks} times`);
    if (c.settledAt > c.mustSettleBy)
      out.push(`call ${i} settled at ${c.settledAt} ms, after its abort or deadline at ${c.mustSettleBy} ms`);
    if (abortListeners(c.controller.signal) !== 0) out.push(`call ${i}: an abort listener outlived it`);
  });
  if (events.call !== calls.length) out.push(`${events.call} 'call' events for ${calls.length} calls`);
  if (clock.live.size !== 0) out.push(`${clock.live.size} Ballast timer(s) pending after every call settled`);
  out.push(...slotProblems(slots));
  if (faults.leaseRecords !== faults.leases)
    out.push(`${faults.leases} half-open probe leases granted, ${faults.leaseRecords} reported`);
  if (faults.records > faults.admissions)
    out.push(`${faults.admissions} breaker admissions, ${faults.records} records (one reported twice)`);
  out.push(...real.admin.failed);
  for (const s of await resilience.admin.inspect())
    if ((s.inUse ?? 0) !== 0 || (s.waiting ?? 0) !== 0)
      out.push(`inspect(): ${s.policy}/${s.route} inUse ${s.inUse}, waiting ${s.waiting}`);
  resilience.dispose();
  await fake.runAll();
  if (fake.pendingTimers() !== 0) out.push(`${fake.pendingTimers()} timer(s) still pending on the FakeClock`);
  await new Promise((r) => setImmediate(r)); // lets a late unhandled rejection surface
  return out;
}

/** The property: one world, one command sequence, every invariant. `tally` gathers what the runs exercised. */
export function interleavingProperty(tally, inject) {
  return fc.asyncProperty(worldArb, commandsArb, async (world, commands) => {
    const slots = trackSlots();
    const before = processProblems.length;
    const setup = () => ({ model: {}, real: buildWorld(world, inject) });
    let real;
    await fc.asyncModelRun(() => {
      const s = setup();
      real = s.real;
      return s;
    }, commands);
    await drain(real);
    const problems = await problemsOf(real, slots, inject);
    if (processProblems.length > before) problems.push(...processProblems.slice(before));
    tally.runs++;
    tally.calls += real.calls.length;
    tally.commands += [...commands].length;
    tally.faults += real.faults.thrown + real.faults.rejected;
    tally.adminActions += real.admin.done;
    for (const [k, n] of real.events.kinds) tally.events.set(k, (tally.events.get(k) ?? 0) + n);
    for (const [k, n] of real.outcomes) tally.outcomes.set(k, (tally.outcomes.get(k) ?? 0) + n);
    if (real.faults.leases > 0)
      tally.events.set(
        'half-open probe lease',
        (tally.events.get('half-open probe lease') ?? 0) + real.faults.leases,
      );
    if (problems.length > 0) throw new Error(problems.join('\n'));
  });
}

/**
 * Runs batches until `until` (ms since epoch) or `maxRuns`; returns the tally and the first failure (with its seed
 * and path). With `replay` ({ seed, path }) runs that one case.
 */
export async function runInterleavings({
  seed,
  until,
  maxRuns = Infinity,
  batch = 200,
  replay,
  inject,
  onProgress,
}) {
  const tally = {
    runs: 0,
    calls: 0,
    commands: 0,
    faults: 0,
    adminActions: 0,
    events: new Map(),
    outcomes: new Map(),
    batches: 0,
  };
  const property = interleavingProperty(tally, inject);
  if (replay !== undefined) {
    const r = await fc.check(property, {
      seed: replay.seed,
      path: replay.path,
      numRuns: 1,
      endOnFailure: true,
    });
    return { tally, failure: r.failed ? describe(r, replay.seed) : undefined };
  }
  for (let b = 0; Date.now() < until && tally.runs < maxRuns; b++) {
    const batchSeed = (seed + b * 0x9e3779b1) | 0;
    blame(`interleavings batch seed ${batchSeed}`);
    const r = await fc.check(property, {
      seed: batchSeed,
      numRuns: Math.min(batch, maxRuns - tally.runs),
      endOnFailure: true,
    });
    tally.batches++;
    if (r.failed) return { tally, failure: describe(r, batchSeed) };
    onProgress?.(tally);
  }
  return { tally, failure: undefined };
}

function describe(r, seed) {
  const message = r.errorInstance?.message ?? String(r.error);
  return {
    seed,
    path: r.counterexamplePath,
    message,
    counterexample: fc.stringify(r.counterexample),
    replay: `npm run soak -- --only=interleavings --seed=${seed} --path=${r.counterexamplePath}`,
  };
}
