import fc from 'fast-check';
import { FakeClock, seededRandom } from '@ballast/testing';
import { AdaptiveThrottle } from '@ballast/sre-throttle';
import { withDeadline } from '../context/deadline';
import { QueuedBulkhead } from '../bulkhead/bulkhead-runtime';
import { ResilienceError } from '../errors/resilience-error';
import type { ResilienceEvent } from '../events';
import { Resilience } from '../resilience';
import { InMemoryCircuitBreakerStore } from '../stores/in-memory-circuit-breaker-store';
import type { BreakerAdmission, BreakerPermit, StateKey } from '../stores/ports';
import { BulkheadStrategy } from '../strategies/bulkhead-strategy';
import { HedgeStrategy } from '../strategies/hedge-strategy';
import { RateLimitStrategy } from '../strategies/rate-limit-strategy';
import { RetryStrategy } from '../strategies/retry-strategy';
import type { Strategy } from '../strategies/strategy';
import { TimeoutStrategy } from '../strategies/timeout-strategy';
import type { Clock } from '../time/clock';
import type { CallContext } from '../resilience-types';
import { policy, trackedController, type TrackedController } from './kit';

/**
 * Harness of properties.spec.ts. Property tests (fast-check + FakeClock + seeded random): random interleavings of concurrent calls with random
 * outcomes, durations, caller aborts, deadlines and attempt timeouts, through the real `Resilience`, never break
 * - breaker invariants: only legal transitions, each from the state the previous one reached; probe leases in
 *   flight ≤ halfOpenMaxCalls; every admission recorded exactly once;
 * - throttle invariants: 0 ≤ p < 1; accepts never exceed calls that ended healthy; no record for a shed call;
 * - bulkhead invariants: inUse ≤ limit at admission, never negative, released exactly once (no over-release),
 *   empty when all settle;
 * - and once every call has settled: no Ballast timer left, no listener on any caller signal.
 */

// ---- instrumentation (prototype spies, routed to the run in progress) -------------------------------------------

export interface Tracker {
  violations: string[];
  leases: Map<string, number>; // `${key}#${generation}` → probe leases in flight
  halfOpenMaxCalls: number;
  admissions: number;
  records: number;
  bulkheads: Set<QueuedBulkhead>;
  accepts: number;
  throttleRecords: number;
  /** Lanes that ran fn (attempt 1) and attempts that ended healthy (ok or a caller error). */
  lanesStarted: number;
  healthyAttempts: number;
}
let tracker: Tracker | undefined;

/** Routes the spies to `t` (or to nobody). */
export function track(t: Tracker | undefined): void {
  tracker = t;
}

const origAcquire = InMemoryCircuitBreakerStore.prototype.acquire;
const origRecord = InMemoryCircuitBreakerStore.prototype.record;
const origBhAcquire = QueuedBulkhead.prototype.acquire;
const origBhRelease = QueuedBulkhead.prototype.release;
const origThrottleRecord = AdaptiveThrottle.prototype.record;

/** Installs the prototype spies (call in beforeAll; `restore` in afterAll). */
export function instrument(): void {
  InMemoryCircuitBreakerStore.prototype.acquire = function (
    this: InMemoryCircuitBreakerStore,
    key: StateKey,
    params,
    now,
  ) {
    const a: BreakerAdmission = origAcquire.call(this, key, params, now);
    const t = tracker;
    if (t !== undefined && a.admitted) {
      t.admissions++;
      if (a.lease !== undefined) {
        const id = `${key.id}#${a.generation}`;
        const n = (t.leases.get(id) ?? 0) + 1;
        t.leases.set(id, n);
        if (n > t.halfOpenMaxCalls)
          t.violations.push(`${n} probes in flight > halfOpenMaxCalls ${t.halfOpenMaxCalls}`);
      }
    }
    return a;
  };
  InMemoryCircuitBreakerStore.prototype.record = function (
    this: InMemoryCircuitBreakerStore,
    key: StateKey,
    params,
    permit: BreakerPermit,
    outcome,
    now,
  ) {
    const t = tracker;
    if (t !== undefined) {
      t.records++;
      if (permit.lease !== undefined) {
        const id = `${key.id}#${permit.generation}`;
        t.leases.set(id, (t.leases.get(id) ?? 0) - 1);
      }
    }
    return origRecord.call(this, key, params, permit, outcome, now);
  };
  QueuedBulkhead.prototype.acquire = function (
    this: QueuedBulkhead,
    criticality: number,
    deadline: number | undefined,
  ) {
    const a = origBhAcquire.call(this, criticality, deadline);
    const t = tracker;
    if (t !== undefined) {
      t.bulkheads.add(this);
      if (a === true && this.inUse > this.limit)
        t.violations.push(`admitted with inUse ${this.inUse} > limit ${this.limit}`);
    }
    return a;
  };
  QueuedBulkhead.prototype.release = function (this: QueuedBulkhead, latency, outcome) {
    origBhRelease.call(this, latency, outcome);
    if (tracker !== undefined && this.inUse < 0) tracker.violations.push(`inUse ${this.inUse} < 0`);
  };
  AdaptiveThrottle.prototype.record = function (this: AdaptiveThrottle, now: number, accepted: boolean) {
    if (tracker !== undefined) {
      tracker.throttleRecords++;
      if (accepted) tracker.accepts++;
    }
    return origThrottleRecord.call(this, now, accepted);
  };
}

export function restore(): void {
  InMemoryCircuitBreakerStore.prototype.acquire = origAcquire;
  InMemoryCircuitBreakerStore.prototype.record = origRecord;
  QueuedBulkhead.prototype.acquire = origBhAcquire;
  QueuedBulkhead.prototype.release = origBhRelease;
  AdaptiveThrottle.prototype.record = origThrottleRecord;
}

/** The FakeClock as Ballast sees it, remembering which timers Ballast itself holds. */
function trackingClock(fake: FakeClock): Clock & { live: Set<unknown> } {
  const live = new Set<unknown>();
  return {
    live,
    now: () => fake.now(),
    setTimeout(cb: () => void, ms: number) {
      const h: unknown = fake.setTimeout(() => {
        live.delete(h);
        cb();
      }, ms);
      live.add(h);
      return h;
    },
    clearTimeout(h: unknown) {
      live.delete(h);
      fake.clearTimeout(h);
    },
  };
}

// ---- random scenarios ---------------------------------------------------------------------------------------------

type Outcome = 'ok' | 'infra' | 'validation' | 'throttled' | 'sync-ok' | 'sync-throw';
interface Step {
  outcome: Outcome;
  duration: number;
  ignoresSignal: boolean;
}
interface CallSpec {
  at: number;
  steps: Step[];
  abortAfter: number | undefined;
  deadline: number | undefined;
  route: 'a' | 'b' | undefined;
  /**
   * Abort this call `microtasks` promise jobs after the first fn invocation of call `after` (mod the number of
   * calls; possibly itself) settles: lands aborts between the executor's async steps, where no timer boundary is.
   */
  abortOn: { after: number; microtasks: number } | undefined;
}

const stepArb: fc.Arbitrary<Step> = fc.record({
  outcome: fc.constantFrom<Outcome>(
    'ok',
    'ok',
    'infra',
    'infra',
    'validation',
    'throttled',
    'sync-ok',
    'sync-throw',
  ),
  duration: fc.integer({ min: 0, max: 60 }),
  ignoresSignal: fc.boolean(),
});

const callArb: fc.Arbitrary<CallSpec> = fc.record({
  at: fc.integer({ min: 0, max: 1200 }),
  steps: fc.array(stepArb, { minLength: 1, maxLength: 3 }),
  abortAfter: fc.option(fc.integer({ min: 0, max: 80 }), { nil: undefined, freq: 3 }),
  deadline: fc.option(fc.integer({ min: 1, max: 120 }), { nil: undefined, freq: 3 }),
  route: fc.constantFrom<'a' | 'b' | undefined>('a', 'b', undefined),
  abortOn: fc.option(fc.record({ after: fc.nat(), microtasks: fc.integer({ min: 0, max: 12 }) }), {
    nil: undefined,
    freq: 4,
  }),
});

export const commonArb = fc.record({
  seed: fc.integer(),
  maxConcurrency: fc.integer({ min: 1, max: 4 }),
  maxQueue: fc.integer({ min: 0, max: 4 }),
  codel: fc.boolean(),
  timeout: fc.integer({ min: 5, max: 40 }),
  maxAttempts: fc.integer({ min: 1, max: 3 }),
  rateLimit: fc.boolean(),
  hedge: fc.option(
    fc.record({ delay: fc.integer({ min: 1, max: 30 }), maxAttempts: fc.integer({ min: 2, max: 3 }) }),
    {
      nil: undefined,
    },
  ),
  calls: fc.array(callArb, { minLength: 1, maxLength: 60 }),
});

export const breakerArb = fc.record({
  failureRatio: fc.constantFrom(0.2, 0.5, 1),
  minThroughput: fc.integer({ min: 1, max: 5 }),
  halfOpenMaxCalls: fc.integer({ min: 1, max: 3 }),
  // longer than any probe can run (≤ 3 attempts × (40 ms timeout + 10 ms backoff)), so no lease is ever reclaimed
  breakDuration: fc.integer({ min: 200, max: 400 }),
});

function errorFor(outcome: Outcome): unknown {
  switch (outcome) {
    case 'infra':
    case 'sync-throw':
      return Object.assign(new Error('infra'), { code: 'ECONNRESET' });
    case 'validation':
      return new ResilienceError({ kind: 'validation' });
    case 'throttled':
      return new ResilienceError({ kind: 'throttled', retryAfter: 5 });
    default:
      return undefined;
  }
}

export type Common = typeof commonArb extends fc.Arbitrary<infer T> ? T : never;

/** Runs one scenario and returns what the invariants need. */
export async function runScenario(common: Common, guard: Strategy, t: Tracker) {
  const fake = new FakeClock();
  const clock = trackingClock(fake);
  const strategies: Strategy[] = [
    guard,
    new BulkheadStrategy({
      maxConcurrency: common.maxConcurrency,
      maxQueue: common.maxQueue,
      ...(common.codel && common.maxQueue > 0 ? { queueTarget: 5, queueInterval: 20 } : {}),
    }),
    new TimeoutStrategy({ timeout: common.timeout }),
    new RetryStrategy({
      maxAttempts: common.maxAttempts,
      retryOn: ['infrastructure', 'throttled'],
      backoff: { base: 1, max: 10 },
    }),
  ];
  if (common.rateLimit) strategies.push(new RateLimitStrategy({ permits: 4, per: 100 }));
  const resilience = new Resilience({
    policies: [
      policy('p', strategies, common.hedge === undefined ? {} : { hedge: new HedgeStrategy(common.hedge) }),
    ],
    clock,
    random: seededRandom(common.seed),
  });
  const events: ResilienceEvent[] = [];
  resilience.on((e) => events.push(e));

  const results: { done: boolean; value?: unknown; error?: unknown }[] = [];
  const controllers: TrackedController[] = [];
  type Action = { at: number; run: () => void };
  const actions: Action[] = [];
  const onFirstSettled: (() => void)[][] = common.calls.map(() => []);
  // Settling "at once" (SPEC §2, §11.14): a call aborted while running settles before the clock moves on, and a
  // call never outlives its deadline.
  const settledAt: number[] = [];
  const mustSettleBy: number[] = common.calls.map(() => Infinity);
  const abort = (i: number): void => {
    if (results[i] !== undefined && !results[i]!.done)
      mustSettleBy[i] = Math.min(mustSettleBy[i]!, fake.now());
    controllers[i]!.ac.abort(new Error(`abort ${i}`));
  };
  common.calls.forEach((c, i) => {
    const tc = trackedController();
    controllers.push(tc);
    if (c.abortOn !== undefined) {
      const k = c.abortOn.microtasks;
      onFirstSettled[c.abortOn.after % common.calls.length]!.push(() => {
        let q = Promise.resolve();
        for (let m = 0; m < k; m++) q = q.then(() => undefined);
        void q.then(() => abort(i));
      });
    }
    actions.push({
      at: c.at,
      run: () => {
        let invocations = 0;
        const fn = (ctx: CallContext): unknown => {
          // retries and hedged lanes walk through the call's steps, so a hedge may be faster than its primary
          const first = invocations === 0;
          const step = c.steps[invocations++ % c.steps.length]!;
          const settled = () => {
            if (first) for (const f of onFirstSettled[i]!) f();
          };
          if (ctx.attempt === 1) t.lanesStarted++;
          if (step.outcome === 'ok' || step.outcome === 'sync-ok' || step.outcome === 'validation')
            t.healthyAttempts++;
          if (step.outcome === 'sync-ok' || step.outcome === 'sync-throw') {
            settled();
            if (step.outcome === 'sync-ok') return 'ok';
            throw errorFor(step.outcome);
          }
          const p = fake.sleep(step.duration, step.ignoresSignal ? undefined : ctx.signal).then(() => {
            if (step.outcome === 'ok') return 'ok';
            throw errorFor(step.outcome);
          });
          p.then(settled, settled);
          return p;
        };
        const r: { done: boolean; value?: unknown; error?: unknown } = { done: false };
        if (c.deadline !== undefined) mustSettleBy[i] = Math.min(mustSettleBy[i]!, fake.now() + c.deadline);
        results[i] = r;
        const start = () => resilience.run(fn, { policy: 'p', route: c.route, signal: tc.signal });
        const p = c.deadline === undefined ? start() : withDeadline(c.deadline, start, clock);
        p.then(
          (v) => {
            settledAt[i] = fake.now();
            Object.assign(r, { done: true, value: v });
          },
          (e: unknown) => {
            settledAt[i] = fake.now();
            Object.assign(r, { done: true, error: e });
          },
        );
      },
    });
    if (c.abortAfter !== undefined) actions.push({ at: c.at + c.abortAfter, run: () => abort(i) });
  });
  actions.sort((x, y) => x.at - y.at);
  for (const a of actions) {
    if (a.at > fake.now()) await fake.advance(a.at - fake.now());
    a.run();
  }
  for (let i = 0; i < 200 && !results.every((r) => r.done); i++) await fake.advance(25);

  if (!results.every((r) => r.done)) t.violations.push('a call never settled');
  settledAt.forEach((at, i) => {
    if (at > mustSettleBy[i]!)
      t.violations.push(`call ${i} settled at ${at}, after its abort/deadline at ${mustSettleBy[i]}`);
  });
  if (clock.live.size !== 0)
    t.violations.push(`${clock.live.size} Ballast timer(s) left after every call settled`);
  controllers.forEach((c, i) => {
    if (c.nodeListeners() !== 0) t.violations.push(`call ${i}: abort listener left on the caller signal`);
  });
  for (const bh of t.bulkheads) {
    if (bh.inUse !== 0 || bh.waiting !== 0)
      t.violations.push(`bulkhead left with inUse ${bh.inUse}, waiting ${bh.waiting}`);
    if (bh.overReleases !== 0) t.violations.push(`bulkhead over-released ${bh.overReleases}×`);
  }
  return { events, results };
}

export function newTracker(halfOpenMaxCalls = Infinity): Tracker {
  return {
    violations: [],
    leases: new Map(),
    halfOpenMaxCalls,
    admissions: 0,
    records: 0,
    bulkheads: new Set(),
    accepts: 0,
    throttleRecords: 0,
    lanesStarted: 0,
    healthyAttempts: 0,
  };
}
