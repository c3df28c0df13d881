import fc from 'fast-check';
import { ResilienceError } from '../errors/resilience-error';
import { AdaptiveThrottleStrategy } from '../strategies/adaptive-throttle-strategy';
import { breaker } from './kit';
import {
  breakerArb,
  commonArb,
  instrument,
  newTracker,
  restore,
  runScenario,
  track,
} from './property-harness';

/**
 * Property tests (fast-check + FakeClock + seeded random): random interleavings of concurrent calls with random
 * outcomes, durations, caller aborts (at timer boundaries and between microtasks), deadlines and attempt timeouts,
 * through the real `Resilience`. The scenario driver and the invariant probes are in property-harness.ts.
 */

beforeAll(instrument);
afterAll(restore);

const LEGAL = new Set(['closed>open', 'open>half_open', 'half_open>open', 'half_open>closed']);

describe('properties of random interleavings through run()', () => {
  it('breaker + bulkhead + retry + timeout (+ rate limit, hedge): invariants hold and nothing leaks', async () => {
    const seen = new Map<string, number>();
    const count = (k: string) => seen.set(k, (seen.get(k) ?? 0) + 1);
    await fc.assert(
      fc.asyncProperty(commonArb, breakerArb, async (common, b) => {
        const t = newTracker(b.halfOpenMaxCalls);
        track(t);
        try {
          const { events, results } = await runScenario(common, breaker({ ...b, samplingWindow: 500 }), t);
          for (const e of events)
            count(e.type === 'breaker_state' ? `to ${e.to}` : e.type === 'rejected' ? e.code : e.type);
          for (const r of results) {
            const code =
              r.error instanceof ResilienceError ? r.error.code : (r.error as Error | undefined)?.message;
            if (code !== undefined) count(`error ${code.startsWith('abort') ? 'caller abort' : code}`);
          }
          if ([...t.leases.keys()].length > 0) count('probe leases');
          const last = new Map<string | undefined, string>();
          for (const e of events) {
            if (e.type !== 'breaker_state') continue;
            if (!LEGAL.has(`${e.from}>${e.to}`)) t.violations.push(`illegal transition ${e.from} → ${e.to}`);
            const prev = last.get(e.route) ?? 'closed';
            if (prev !== e.from) t.violations.push(`transition from ${e.from} but the breaker was ${prev}`);
            last.set(e.route, e.to);
          }
          if (t.records !== t.admissions)
            t.violations.push(`${t.admissions} admissions but ${t.records} records`);
          for (const [id, n] of t.leases)
            if (n !== 0) t.violations.push(`${n} probe lease(s) of ${id} never reported`);
          expect(t.violations).toEqual([]);
        } finally {
          track(undefined);
        }
      }),
      { numRuns: 200, seed: 0x5eed },
    );
    // the scenarios really exercise every path (else the invariants above would hold vacuously)
    for (const k of [
      'to open',
      'to half_open',
      'to closed',
      'probe leases',
      'circuit_open',
      'bulkhead_full',
      'bulkhead_queue_shed',
      'rate_limited',
      'attempt_timeout',
      'retry',
      'hedge_attempt',
      'hedge_won',
      'error caller abort',
      'error deadline_exceeded',
    ]) {
      expect([k, (seen.get(k) ?? 0) > 0]).toEqual([k, true]);
    }
  });

  it('adaptive throttle + bulkhead + retry + timeout: 0 ≤ p < 1, accepts ≤ healthy attempts, records ≤ lanes run, nothing leaks', async () => {
    const throttleArb = fc.record({
      k: fc.constantFrom(1, 1.5, 2),
      minThroughput: fc.integer({ min: 1, max: 10 }),
    });
    const probabilities: number[] = [];
    await fc.assert(
      fc.asyncProperty(commonArb, throttleArb, async (common, o) => {
        const t = newTracker();
        track(t);
        try {
          const { events } = await runScenario(
            common,
            new AdaptiveThrottleStrategy({ ...o, window: 1000 }),
            t,
          );
          for (const e of events) {
            if (e.type === 'throttle_reject') {
              probabilities.push(e.probability);
              if (!(e.probability > 0 && e.probability < 1))
                t.violations.push(`shed at p = ${e.probability}`);
            }
          }
          // a lane records at most once, after running fn; an accept needs a healthy last attempt
          if (t.accepts > t.healthyAttempts)
            t.violations.push(`${t.accepts} accepts > ${t.healthyAttempts} healthy attempts`);
          if (t.throttleRecords > t.lanesStarted)
            t.violations.push(`${t.throttleRecords} records > ${t.lanesStarted} lanes that ran fn`);
          expect(t.violations).toEqual([]);
        } finally {
          track(undefined);
        }
      }),
      { numRuns: 100, seed: 0x7407 },
    );
    expect(probabilities.length).toBeGreaterThan(0); // the scenarios did make the throttle shed
  });
});
