// The invariant probes of the interleaving runs: what Ballast holds (timers on the clock, abort listeners on the
// callers' signals, bulkhead slots, breaker admissions at the store port) is counted from outside, through the ports
// Ballast is given (Clock, AbortSignal, stores) and one prototype spy on the bulkhead runtime.
import { getEventListeners } from 'node:events';
import { core, source } from './ballast.mjs';

const { QueuedBulkhead } = source('core/src/bulkhead/bulkhead-runtime');

/** A Clock over a FakeClock that remembers which timers Ballast armed and has not cleared or fired. */
export function trackingClock(fake) {
  const live = new Set();
  return {
    live,
    now: () => fake.now(),
    setTimeout(cb, ms) {
      const h = fake.setTimeout(() => {
        live.delete(h);
        cb();
      }, ms);
      live.add(h);
      return h;
    },
    clearTimeout(h) {
      live.delete(h);
      fake.clearTimeout(h);
    },
  };
}

/** Abort listeners still attached to a caller's signal (Node's own count). */
export const abortListeners = (signal) => getEventListeners(signal, 'abort').length;

// ---- bulkhead slots: every admission released exactly once, no admission over the limit ------------------------

let slots;
const origAcquire = QueuedBulkhead.prototype.acquire;
/** Routes the bulkhead spy to a fresh tally (one per run); returns it. */
export function trackSlots() {
  slots = { bulkheads: new Set(), overLimit: 0 };
  return slots;
}
QueuedBulkhead.prototype.acquire = function (criticality, deadline) {
  const a = origAcquire.call(this, criticality, deadline);
  if (slots !== undefined) {
    slots.bulkheads.add(this);
    if (a === true && this.inUse > this.limit) slots.overLimit++;
  }
  return a;
};
/** The slot problems left once every call has settled. */
export function slotProblems(tally) {
  const out = [];
  if (tally.overLimit > 0) out.push(`${tally.overLimit} bulkhead admission(s) over the limit`);
  for (const b of tally.bulkheads) {
    if (b.inUse !== 0 || b.waiting !== 0)
      out.push(`bulkhead left with inUse ${b.inUse}, waiting ${b.waiting}`);
    if (b.overReleases !== 0) out.push(`bulkhead slot released twice (${b.overReleases} over-release(s))`);
  }
  return out;
}

// ---- stores that fail at random points --------------------------------------------------------------------------

/**
 * Wraps a store: each method answers normally (synchronously or as a promise, like a remote store), or throws, or
 * rejects, with the probability the run's `faults.rate` gives (0 = healthy). Counts breaker admissions and records
 * at the port: a half-open probe lease must be reported exactly once (a leaked one wedges half-open until reclaimed),
 * and no admission more than once. A closed-state admission that arrives after its call was cancelled is not
 * reported, by design (pipeline.ts: it reserved nothing), so plain admissions may outnumber records.
 */
export function faultyStore(inner, name, faults, random) {
  return new Proxy(inner, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== 'function' || prop === 'evict') return v;
      return (...args) => {
        // counted on the way in: a record the store then loses was still reported by Ballast
        if (name === 'circuitBreaker' && prop === 'record') {
          if (faults.dropLeaseRecords && args[2]?.lease !== undefined) return { state: 'half_open' };
          faults.records++;
          if (args[2]?.lease !== undefined) faults.leaseRecords++;
        }
        const roll = random();
        if (roll < faults.rate / 2) {
          faults.thrown++;
          throw new Error(`${name}.${String(prop)} down (thrown)`);
        }
        if (roll < faults.rate) {
          faults.rejected++;
          return Promise.reject(new Error(`${name}.${String(prop)} down (rejected)`));
        }
        const out = v.apply(target, args);
        if (name === 'circuitBreaker' && prop === 'acquire' && out.admitted) {
          faults.admissions++;
          if (out.lease !== undefined) faults.leases++;
        }
        return random() < 0.5 ? out : Promise.resolve(out);
      };
    },
  });
}

// ---- unhandled rejections and process warnings, for the whole process --------------------------------------------

export const processProblems = [];
let current = 'no run';
/** Names the run in progress, so a late unhandled rejection is blamed on the right seed. */
export function blame(label) {
  current = label;
}
process.on('unhandledRejection', (reason) =>
  processProblems.push(`unhandled rejection during ${current}: ${reason?.stack ?? String(reason)}`),
);
process.on('warning', (w) => {
  if (w.name !== 'ExperimentalWarning')
    processProblems.push(`process warning during ${current}: ${w.name}: ${w.message}`);
});

export const { ResilienceError } = core;
