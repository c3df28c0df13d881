// One interleaving run's world: two policies covering every strategy (rate limit, bulkhead with queue, breaker,
// retry, timeout, hedge, fallback; adaptive throttle with an adaptive bulkhead in the other), stores that fail at
// random points, and the commands fast-check interleaves over it (calls, clock steps, caller aborts between
// timers and between microtasks, retunes, force-opens, store fault rates).
import fc from 'fast-check';
import { core, testing } from './ballast.mjs';
import { faultyStore, trackingClock } from './probes.mjs';

const {
  AdaptiveBulkheadStrategy,
  AdaptiveThrottleStrategy,
  BulkheadStrategy,
  CircuitBreakerStrategy,
  FallbackStrategy,
  GradientBulkheadStrategy,
  HedgeStrategy,
  InMemoryCircuitBreakerStore,
  InMemoryLatencyDigestStore,
  InMemoryRateLimitStore,
  RateLimitStrategy,
  Resilience,
  ResilienceError,
  ResiliencePolicy,
  RetryStrategy,
  TimeoutStrategy,
  bindCriticality,
  withDeadline,
} = core;
const { FakeClock, seededRandom } = testing;

const ROUTES = ['a', 'b', undefined];

export const tuningArb = fc.record({
  maxConcurrency: fc.integer({ min: 1, max: 3 }),
  maxQueue: fc.integer({ min: 0, max: 3 }),
  codel: fc.boolean(),
  prioritized: fc.boolean(),
  failureRatio: fc.constantFrom(0.25, 0.5, 1),
  minThroughput: fc.integer({ min: 1, max: 4 }),
  halfOpenMaxCalls: fc.integer({ min: 1, max: 2 }),
  breakDuration: fc.integer({ min: 20, max: 200 }),
  timeout: fc.integer({ min: 5, max: 40 }),
  maxAttempts: fc.integer({ min: 1, max: 3 }),
  rateLimit: fc.boolean(),
  hedge: fc.option(fc.record({ delay: fc.integer({ min: 1, max: 25 }), maxAttempts: fc.constantFrom(2, 3) })),
  gradient: fc.boolean(),
});

export const worldArb = fc.record({
  seed: fc.integer(),
  failOpenOnStoreError: fc.boolean(),
  faultRate: fc.constantFrom(0, 0, 0.1, 0.4),
  policyFallback: fc.boolean(),
  tuning: tuningArb,
});

/** The two policies of a world, from one tuning (a retune rebuilds them from another). */
function policies(world, t) {
  const shared = { failOpenOnStoreError: world.failOpenOnStoreError };
  const queue =
    t.maxQueue > 0
      ? { prioritized: t.prioritized, ...(t.codel ? { queueTarget: 4, queueInterval: 16 } : {}) }
      : {};
  const main = [
    new BulkheadStrategy({ maxConcurrency: t.maxConcurrency, maxQueue: t.maxQueue, ...queue }),
    new CircuitBreakerStrategy({
      failureRatio: t.failureRatio,
      samplingWindow: 400,
      minThroughput: t.minThroughput,
      breakDuration: t.breakDuration,
      halfOpenMaxCalls: t.halfOpenMaxCalls,
    }),
    new RetryStrategy({
      maxAttempts: t.maxAttempts,
      retryOn: ['infrastructure', 'throttled'],
      backoff: { base: 1, max: 8 },
    }),
    new TimeoutStrategy({ timeout: t.timeout }),
  ];
  if (t.rateLimit) main.unshift(new RateLimitStrategy({ permits: 5, per: 100 }));
  const shedBulkhead = t.gradient
    ? new GradientBulkheadStrategy({ maxConcurrency: t.maxConcurrency + 1, maxQueue: t.maxQueue, ...queue })
    : new AdaptiveBulkheadStrategy({
        latencyThreshold: 15,
        maxConcurrency: t.maxConcurrency + 1,
        maxQueue: t.maxQueue,
        cooldown: 20,
        ...queue,
      });
  return [
    new ResiliencePolicy({
      name: 'main',
      strategies: main,
      ...shared,
      ...(t.hedge === null ? {} : { hedge: new HedgeStrategy(t.hedge) }),
      ...(world.policyFallback
        ? { fallback: new FallbackStrategy({ fallback: () => 'policy fallback', on: ['infrastructure'] }) }
        : {}),
    }),
    new ResiliencePolicy({
      name: 'shed',
      strategies: [
        new AdaptiveThrottleStrategy({ k: 1.5, window: 300, minThroughput: 2 }),
        shedBulkhead,
        new RetryStrategy({ maxAttempts: 2, backoff: { base: 1, max: 4 } }),
        new TimeoutStrategy({ timeout: t.timeout + 10 }),
      ],
      ...shared,
    }),
  ];
}

/** Builds the live world of one run: clock, stores, Resilience, and the ledger the invariants read. */
export function buildWorld(world, inject) {
  const fake = new FakeClock();
  const clock = trackingClock(fake);
  const random = seededRandom(world.seed);
  const storeRandom = seededRandom(world.seed ^ 0x5a5a5a5a);
  const faults = {
    rate: world.faultRate,
    thrown: 0,
    rejected: 0,
    admissions: 0,
    records: 0,
    leases: 0,
    leaseRecords: 0,
    dropLeaseRecords: inject === 'drop-lease-record',
  };
  const resilience = new Resilience({
    policies: policies(world, world.tuning),
    clock,
    random,
    stores: {
      circuitBreaker: faultyStore(new InMemoryCircuitBreakerStore(), 'circuitBreaker', faults, storeRandom),
      rateLimit: faultyStore(new InMemoryRateLimitStore(), 'rateLimit', faults, storeRandom),
      latencyDigest: faultyStore(new InMemoryLatencyDigestStore(), 'latencyDigest', faults, storeRandom),
    },
  });
  const events = { call: 0, kinds: new Map() };
  resilience.on((e) => {
    if (e.type === 'call') events.call++;
    const k = e.type === 'rejected' ? e.code : e.type;
    events.kinds.set(k, (events.kinds.get(k) ?? 0) + 1);
    if (e.shadow === true)
      events.kinds.set('shadow decision', (events.kinds.get('shadow decision') ?? 0) + 1);
  });
  return {
    world,
    fake,
    clock,
    resilience,
    faults,
    events,
    outcomes: new Map(),
    calls: [],
    admin: { done: 0, failed: [], pending: [] },
  };
}

function failure(outcome) {
  if (outcome === 'infra') return Object.assign(new Error('connection reset'), { code: 'ECONNRESET' });
  if (outcome === 'validation') return new ResilienceError({ kind: 'validation' });
  return new ResilienceError({ kind: 'throttled', retryAfter: 3 });
}

/** Aborts call `i` of the run (no-op once it has settled); an abort while pending must settle it before time moves. */
function abortCall(real, i) {
  const c = real.calls[i];
  if (c === undefined) return;
  if (c.settles === 0) c.mustSettleBy = Math.min(c.mustSettleBy, real.fake.now());
  c.controller.abort(new Error(`caller abort of call ${i}`));
}

const stepArb = fc.record({
  outcome: fc.constantFrom('ok', 'ok', 'infra', 'infra', 'validation', 'throttled', 'sync-ok', 'sync-throw'),
  duration: fc.integer({ min: 0, max: 50 }),
  ignoresSignal: fc.boolean(),
});

class Call {
  constructor(spec) {
    this.spec = spec;
  }
  check = () => true;
  async run(_model, real) {
    const s = this.spec;
    const i = real.calls.length;
    const controller = new AbortController();
    const c = { controller, settles: 0, fallbacks: 0, settledAt: undefined, mustSettleBy: Infinity };
    real.calls.push(c);
    let n = 0;
    const fn = (ctx) => {
      const step = s.steps[n++ % s.steps.length];
      if (n === 1 && s.abortAfterMicrotasks !== null) {
        let q = Promise.resolve();
        for (let m = 0; m < s.abortAfterMicrotasks; m++) q = q.then(() => undefined);
        void q.then(() => abortCall(real, i));
      }
      if (step.outcome === 'sync-ok') return 'ok';
      if (step.outcome === 'sync-throw') throw failure('infra');
      return real.fake.sleep(step.duration, step.ignoresSignal ? undefined : ctx.signal).then(() => {
        if (step.outcome === 'ok') return 'ok';
        throw failure(step.outcome);
      });
    };
    const options = {
      policy: s.policy,
      route: s.route,
      signal: controller.signal,
      ...(s.hedge ? {} : { hedge: false }),
      ...(s.callFallback ? { fallback: () => (c.fallbacks++, 'call fallback') } : {}),
    };
    let start = () => real.resilience.run(fn, options);
    if (s.criticality !== null) {
      const inner = start;
      start = () => bindCriticality(s.criticality, inner);
    }
    if (s.deadline !== null) c.mustSettleBy = real.fake.now() + s.deadline;
    const p = s.deadline === null ? start() : withDeadline(s.deadline, start, real.clock);
    const settled = (outcome) => {
      c.settles++;
      c.settledAt = real.fake.now();
      real.outcomes.set(outcome, (real.outcomes.get(outcome) ?? 0) + 1);
    };
    p.then(
      (v) => settled(v === 'ok' ? 'value' : v),
      (e) =>
        settled(
          e instanceof ResilienceError
            ? `error ${e.code}`
            : String(e?.message).startsWith('caller abort')
              ? 'caller abort'
              : `error ${e?.message}`,
        ),
    );
  }
  toString() {
    return `Call(${JSON.stringify(this.spec)})`;
  }
}

class Advance {
  constructor(ms) {
    this.ms = ms;
  }
  check = () => true;
  async run(_model, real) {
    await real.fake.advance(this.ms);
  }
  toString() {
    return `Advance(${this.ms})`;
  }
}

class Abort {
  constructor(index) {
    this.index = index;
  }
  check = () => true;
  async run(_model, real) {
    if (real.calls.length > 0) abortCall(real, this.index % real.calls.length);
  }
  toString() {
    return `Abort(${this.index})`;
  }
}

/**
 * An admin action, not awaited (it races the calls, as an operator's does): retune, force-open, clear, mode, chaos,
 * store faults.
 */
class Admin {
  constructor(action, arg, route) {
    Object.assign(this, { action, arg, route });
  }
  check = () => true;
  async run(_model, real) {
    const admin = real.resilience.admin;
    const policy = this.arg?.policy ?? 'main';
    let p;
    if (this.action === 'retune') {
      const [main, shed] = policies(real.world, this.arg.tuning);
      p = admin.retune(this.arg.policy === 'main' ? main : shed);
    } else if (this.action === 'forceOpen') p = admin.forceOpen(policy, this.route);
    else if (this.action === 'clearForcedOpen') p = admin.clearForcedOpen(policy, this.route);
    else if (this.action === 'setMode') p = admin.setMode(policy, this.arg.mode);
    else if (this.action === 'setChaos') p = admin.setChaos(policy, this.arg.patch);
    else {
      real.faults.rate = this.arg.rate;
      return;
    }
    // an admin action may fail only with a ResilienceError (a store outage under failOpenOnStoreError: false)
    real.admin.pending.push(p);
    p.then(
      () => real.admin.done++,
      (e) =>
        e instanceof ResilienceError
          ? real.admin.done++
          : real.admin.failed.push(`${this}: ${e?.stack ?? e}`),
    );
  }
  toString() {
    return `Admin(${this.action}, ${JSON.stringify(this.arg)}, ${this.route})`;
  }
}

const callArb = fc
  .record({
    policy: fc.constantFrom('main', 'main', 'shed'),
    route: fc.constantFrom(...ROUTES),
    steps: fc.array(stepArb, { minLength: 1, maxLength: 3 }),
    deadline: fc.option(fc.integer({ min: 1, max: 100 }), { freq: 3 }),
    criticality: fc.option(fc.integer({ min: 0, max: 3 }), { freq: 2 }),
    hedge: fc.boolean(),
    callFallback: fc.boolean(),
    abortAfterMicrotasks: fc.oneof(
      { arbitrary: fc.constant(null), weight: 3 },
      { arbitrary: fc.integer({ min: 0, max: 10 }), weight: 1 },
    ),
  })
  .map((s) => new Call(s));

export const commandsArb = fc.commands(
  [
    callArb,
    callArb,
    callArb,
    fc.integer({ min: 0, max: 60 }).map((ms) => new Advance(ms)),
    fc.integer({ min: 0, max: 60 }).map((ms) => new Advance(ms)),
    fc.nat().map((i) => new Abort(i)),
    fc
      .record({ policy: fc.constantFrom('main', 'shed'), tuning: tuningArb })
      .map((arg) => new Admin('retune', arg, undefined)),
    fc
      .tuple(
        fc.constantFrom('forceOpen', 'clearForcedOpen'),
        fc.constantFrom('main', 'shed'),
        fc.constantFrom(...ROUTES),
      )
      .map(([action, policy, route]) => new Admin(action, { policy }, route)),
    fc.constantFrom(0, 0.2, 0.6).map((rate) => new Admin('faults', { rate }, undefined)),
    // Shadow mode and chaos at run time (SPEC §14.3): decisions reported, not enforced; injections on and off.
    fc
      .record({ policy: fc.constantFrom('main', 'shed'), mode: fc.constantFrom('shadow', 'enforce') })
      .map((arg) => new Admin('setMode', arg, undefined)),
    fc
      .record({
        policy: fc.constantFrom('main', 'shed'),
        patch: fc.record(
          {
            enabled: fc.boolean(),
            fault: fc.option(fc.record({ rate: fc.constantFrom(0, 0.2, 1) }), { nil: null }),
            latency: fc.option(
              fc.record({ rate: fc.constantFrom(0.2, 1), delay: fc.integer({ min: 0, max: 40 }) }),
              { nil: null },
            ),
            outcome: fc.option(fc.record({ rate: fc.constantFrom(0.1, 1), value: fc.constant('ok') }), {
              nil: null,
            }),
          },
          { requiredKeys: ['enabled'] },
        ),
      })
      .map((arg) => new Admin('setChaos', arg, undefined)),
  ],
  { maxCommands: 40, size: 'medium' },
);
