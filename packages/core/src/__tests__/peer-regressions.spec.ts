import fc from 'fast-check';
import { seededRandom } from '@ballast/testing';
import { Criticality, bindCriticality } from '../context/criticality';
import type { Resilience } from '../resilience';
import type { CallContext } from '../resilience-types';
import { InMemoryCircuitBreakerStore } from '../stores/in-memory-circuit-breaker-store';
import { InMemoryRateLimitStore } from '../stores/in-memory-rate-limit-store';
import { systemClock } from '../time/clock';
import { BackoffStrategy } from '../strategies/backoff-strategy';
import { BulkheadStrategy } from '../strategies/bulkhead-strategy';
import { RateLimitStrategy } from '../strategies/rate-limit-strategy';
import { RetryStrategy } from '../strategies/retry-strategy';
import { HedgeStrategy } from '../strategies/hedge-strategy';
import { TimeoutStrategy } from '../strategies/timeout-strategy';
import { deferred, infraError, settle, setup } from './helpers';
import { breaker, codeOf, errorOf, kindError, policy } from './kit';

/**
 * One regression test per peer library bug that applies to core (each describe names the upstream issues;
 * 6–12 in peer-regressions-leaks.spec.ts), named after the issue. Most have a fuller counterpart in the suite of their concept; these are the compact, named proofs.
 */

const state = async (r: Resilience) => (await r.admin.inspect({ policy: 'p' }))[0]?.breaker?.state;
const failOnce = (r: Resilience) => r.run(() => Promise.reject(infraError()), { policy: 'p' }).catch(() => 0);

describe('peer libraries’ bugs — breaker', () => {
  it('1. half-open stampede (opossum #119, Polly #216): 1,000 concurrent calls → exactly k probes', async () => {
    const { resilience, clock } = setup([policy('p', [breaker({ minThroughput: 1, halfOpenMaxCalls: 2 })])]);
    await failOnce(resilience);
    await clock.advance(5000);
    let executions = 0;
    const gate = deferred();
    const runs = Array.from({ length: 1000 }, () =>
      settle(resilience.run(() => (executions++, gate.promise), { policy: 'p' })),
    );
    await clock.advance(0);
    expect(executions).toBe(2);
    expect(runs.filter((r) => codeOf(r.error) === 'circuit_open')).toHaveLength(998);
    gate.resolve('ok');
    await clock.advance(0);
  });

  it('2. results overhanging into half-open (Polly #217) are ignored', async () => {
    const { resilience, clock } = setup([policy('p', [breaker({ minThroughput: 1 })])]);
    const old = deferred();
    settle(resilience.run(() => old.promise, { policy: 'p' }));
    await failOnce(resilience);
    await clock.advance(5000);
    const probe = deferred();
    settle(resilience.run(() => probe.promise, { policy: 'p' }));
    await clock.advance(0);
    old.resolve('from closed');
    await clock.advance(0);
    expect(await state(resilience)).toBe('half_open');
  });

  it.each(['after a probe closed it', 'after resetBreaker'])(
    '2b. a failure overhanging into a later closed period (%s), after a fresh admission, moves nothing',
    async (how) => {
      const { resilience, clock, ofType } = setup([policy('p', [breaker({ minThroughput: 1 })])]);
      const old = deferred();
      settle(resilience.run(() => old.promise, { policy: 'p' })); // admitted in the first closed period
      await failOnce(resilience); // → open
      if (how === 'after a probe closed it') {
        await clock.advance(5000);
        await resilience.run(() => 'probe', { policy: 'p' }); // half-open → closed
      } else {
        await resilience.admin.resetBreaker('p');
      }
      // a fresh admission: an in-process store may hand out its admission object again
      await resilience.run(() => 'fresh', { policy: 'p' });
      const transitions = ofType('breaker_state').length;
      old.reject(infraError());
      await clock.advance(0);
      expect(await state(resilience)).toBe('closed');
      expect(ofType('breaker_state')).toHaveLength(transitions);
    },
  );

  it('3. never leaves OPEN (opossum #385): a late failure while open does not push the half-open time back', async () => {
    const { resilience, clock } = setup([policy('p', [breaker({ minThroughput: 1 })])]);
    const late = deferred();
    settle(resilience.run(() => late.promise, { policy: 'p' }));
    await failOnce(resilience); // open at t=0 until t=5000
    await clock.advance(3000);
    late.reject(infraError()); // a second failure while open
    await clock.advance(2000);
    await expect(resilience.run(() => 'probe', { policy: 'p' })).resolves.toBe('probe');
    expect(await state(resilience)).toBe('closed');
  });

  it('4. an unhandled error (Polly #311, #717) during a probe releases the lease and moves nothing', async () => {
    const { resilience, clock } = setup([policy('p', [breaker({ minThroughput: 1 })])]);
    await failOnce(resilience);
    await clock.advance(5000);
    await resilience.run(() => Promise.reject(kindError('concurrency')), { policy: 'p' }).catch(() => 0);
    expect(await state(resilience)).toBe('half_open');
    await expect(resilience.run(() => 'next probe', { policy: 'p' })).resolves.toBe('next probe');
  });

  it('5. no off-by-one in the probe count (virtrigaud #96): N = 3 → exactly 3 probes, closed after 3 successes', async () => {
    const { resilience, clock } = setup([policy('p', [breaker({ minThroughput: 1, halfOpenMaxCalls: 3 })])]);
    await failOnce(resilience);
    await clock.advance(5000);
    const gates = [deferred(), deferred(), deferred()];
    gates.forEach((g) => settle(resilience.run(() => g.promise, { policy: 'p' })));
    await clock.advance(0);
    expect(codeOf(await errorOf(resilience.run(() => 1, { policy: 'p' })))).toBe('circuit_open');
    for (const [i, g] of gates.entries()) {
      expect(await state(resilience)).toBe('half_open');
      g.resolve(i);
      await clock.advance(0);
    }
    expect(await state(resilience)).toBe('closed');
  });

  it('18. no false trip below minThroughput (opossum #481); samples leave the window exactly at the bucket edge', async () => {
    const make = () =>
      setup([policy('p', [breaker({ minThroughput: 4, failureRatio: 1, samplingWindow: '10s' })])]);
    const inside = make();
    await inside.clock.advance(500);
    for (let i = 0; i < 3; i++) await failOnce(inside.resilience);
    expect(await state(inside.resilience)).toBe('closed');
    await inside.clock.advance(9499); // t = 9999: the t=500 bucket is still in the window
    await failOnce(inside.resilience);
    expect(await state(inside.resilience)).toBe('open');

    const outside = make();
    await outside.clock.advance(500);
    for (let i = 0; i < 3; i++) await failOnce(outside.resilience);
    await outside.clock.advance(9500); // t = 10000: ten buckets later, gone
    await failOnce(outside.resilience);
    expect(await state(outside.resilience)).toBe('closed');
  });

  it('19. wall-clock jumps (NTP) neither close a breaker nor refill a bucket: only the injected clock counts', async () => {
    const { resilience } = setup([
      policy('cb', [breaker({ minThroughput: 1 })]),
      policy('rl', [new RateLimitStrategy({ permits: 1, per: '1h' })]),
    ]);
    await resilience.run(() => Promise.reject(infraError()), { policy: 'cb' }).catch(() => 0);
    await resilience.run(() => 1, { policy: 'rl' });
    const year = 365 * 24 * 3600 * 1000;
    const now = jest.spyOn(Date, 'now').mockReturnValue(Date.now() + year);
    const perf = jest.spyOn(performance, 'now').mockReturnValue(performance.now() + year);
    try {
      expect(codeOf(await errorOf(resilience.run(() => 1, { policy: 'cb' })))).toBe('circuit_open');
      expect(codeOf(await errorOf(resilience.run(() => 1, { policy: 'rl' })))).toBe('rate_limited');
    } finally {
      now.mockRestore();
      perf.mockRestore();
    }
  });

  it('19. the system clock is monotonic: a Date.now jump does not move it', () => {
    const before = systemClock.now();
    const now = jest.spyOn(Date, 'now').mockReturnValue(Date.now() + 3_600_000);
    try {
      expect(systemClock.now() - before).toBeLessThan(60_000);
    } finally {
      now.mockRestore();
    }
  });

  it('22. own rejections are not breaker failures (resilience4j #1656); an open circuit is not retried (virtrigaud PR #70)', async () => {
    const { resilience, clock, ofType } = setup([
      policy('p', [
        new RetryStrategy({ maxAttempts: 5, backoff: { base: 1, max: 1, jitter: 'none' } }),
        breaker({ minThroughput: 1 }),
        new BulkheadStrategy({ maxConcurrency: 1 }),
      ]),
    ]);
    const d = deferred();
    settle(resilience.run(() => d.promise, { policy: 'p' }));
    for (let i = 0; i < 5; i++) await resilience.run(() => 1, { policy: 'p' }).catch(() => 0);
    d.resolve(1);
    await clock.advance(0);
    expect(await state(resilience)).toBe('closed');
    settle(resilience.run(() => Promise.reject(infraError()), { policy: 'p' }));
    await clock.advance(10);
    const retries = ofType('retry').length;
    expect(codeOf(await errorOf(resilience.run(() => 1, { policy: 'p' })))).toBe('circuit_open');
    expect(ofType('retry')).toHaveLength(retries);
  });

  it('22. an outer retry around a nested open circuit honours its retryAfter instead of hammering it', async () => {
    const { resilience, clock, ofType } = setup([
      policy('inner', [breaker({ minThroughput: 1, breakDuration: '5s' })]),
      policy('outer', [
        // max covers the break: a longer retryAfter ends the retries at once instead (retry-after-bound.spec.ts)
        new RetryStrategy({
          maxAttempts: 3,
          backoff: { base: 10, max: '5s', multiplier: 1, jitter: 'none' },
        }),
      ]),
    ]);
    await resilience.run(() => Promise.reject(infraError()), { policy: 'inner' }).catch(() => 0);
    let innerCalls = 0;
    const s = settle(
      resilience.run(() => resilience.run(() => (innerCalls++, 'recovered'), { policy: 'inner' }), {
        policy: 'outer',
      }),
    );
    await clock.advance(5000);
    expect(s.value).toBe('recovered');
    expect(ofType('retry').map((e) => e.delay)).toEqual([5000]);
    expect(innerCalls).toBe(1);
  });
});

describe('peer libraries’ bugs — request bodies and limiter races', () => {
  it('13. a retry or a hedge never resends a consumed body (failsafe-go #73): every attempt builds its own; hedge: false gates hedging', async () => {
    const { resilience, clock } = setup([
      policy('retried', [
        new RetryStrategy({ maxAttempts: 3, backoff: { base: 1, max: 1, jitter: 'none' } }),
      ]),
      policy('hedged', [], { hedge: new HedgeStrategy({ delay: 10, maxAttempts: 2 }) }),
    ]);
    // A body that can be read once (a stream): an attempt reusing an earlier attempt's body would throw.
    const sent: { body: { read: boolean }; ctx: CallContext }[] = [];
    const send = (ctx: CallContext, answer: () => Promise<string>) => {
      const body = { read: false };
      for (const s of sent) if (s.body === body || s.ctx === ctx) throw new Error('body or context reused');
      body.read = true;
      sent.push({ body, ctx });
      return answer();
    };
    const retried = settle(
      resilience.run(
        (ctx) => send(ctx, () => (ctx.attempt < 3 ? Promise.reject(infraError()) : Promise.resolve('ok'))),
        {
          policy: 'retried',
        },
      ),
    );
    await clock.advance(10);
    expect(retried.value).toBe('ok');
    expect(sent.map((s) => s.ctx.attempt)).toEqual([1, 2, 3]);

    sent.length = 0;
    const slow = deferred<string>();
    const hedgedRun = settle(resilience.run((ctx) => send(ctx, () => slow.promise), { policy: 'hedged' }));
    await clock.advance(10);
    expect(sent).toHaveLength(2); // the hedge built its own request, with its own context and signal
    expect(sent[1]!.ctx.signal).not.toBe(sent[0]!.ctx.signal);
    slow.resolve('won');
    await clock.advance(0);
    expect(hedgedRun.value).toBe('won');

    // non-idempotent work opts out: a slow call is never sent twice
    sent.length = 0;
    const once = deferred<string>();
    const single = settle(
      resilience.run((ctx) => send(ctx, () => once.promise), { policy: 'hedged', hedge: false }),
    );
    await clock.advance(1000);
    expect(sent).toHaveLength(1);
    once.resolve('once');
    await clock.advance(0);
    expect(single.value).toBe('once');
  });

  it('16. no TOCTOU in a prioritized limiter (concurrency-limits #234): 1,000 mixed-criticality calls through async stores never run more than the limit', async () => {
    // Stores answering a promise (like a remote one) put promise hops between arrival, the bulkhead and the call.
    const later = <S extends object>(inner: S): S =>
      new Proxy(inner, {
        get(target, prop, receiver) {
          const v = Reflect.get(target, prop, receiver) as unknown;
          if (typeof v !== 'function' || prop === 'evict') return v;
          return (...args: unknown[]) =>
            Promise.resolve((v as (...a: unknown[]) => unknown).apply(target, args));
        },
      });
    const limit = 4;
    const { resilience, clock } = setup(
      [
        policy('p', [
          new RateLimitStrategy({ permits: 1_000_000, per: '1s' }),
          new BulkheadStrategy({
            maxConcurrency: limit,
            maxQueue: 50,
            prioritized: true,
            queueTarget: 5,
            queueInterval: 50,
          }),
          breaker({ minThroughput: 1_000_000 }),
        ]),
      ],
      {
        stores: {
          rateLimit: later(new InMemoryRateLimitStore()),
          circuitBreaker: later(new InMemoryCircuitBreakerStore()),
        },
      },
    );
    const random = seededRandom(16);
    const levels = [Criticality.BEST_EFFORT, Criticality.DEGRADED, Criticality.NORMAL, Criticality.CRITICAL];
    let running = 0;
    let peak = 0;
    let started = 0;
    const open: ReturnType<typeof deferred<string>>[] = [];
    const finishOne = () => open.splice(Math.floor(random() * open.length), 1)[0]?.resolve('done');
    const fn = async () => {
      running++;
      started++;
      peak = Math.max(peak, running);
      const d = deferred<string>();
      open.push(d);
      try {
        return await d.promise;
      } finally {
        running--;
      }
    };
    const runs: ReturnType<typeof settle<string>>[] = [];
    // Waves of simultaneous arrivals (they reach the bulkhead in the same promise turn, free slots or not), with
    // releases landing between and inside waves at random promise depths; now and then the queue drains fully.
    while (runs.length < 1000) {
      for (let n = 1 + Math.floor(random() * 30); n > 0; n--) {
        const level = levels[Math.floor(random() * levels.length)]!;
        runs.push(settle(bindCriticality(level, () => resilience.run(fn, { policy: 'p' }))));
        if (random() < 0.1) finishOne();
      }
      for (let n = Math.floor(random() * (random() < 0.2 ? 60 : 6)); n > 0; n--) {
        finishOne();
        for (let hops = Math.floor(random() * 4); hops > 0; hops--) await Promise.resolve();
      }
      await clock.advance(random() < 0.3 ? 1 : 0);
    }
    for (let i = 0; i < 10_000 && !runs.every((r) => r.done); i++) {
      finishOne();
      await clock.advance(1);
    }
    expect(runs.every((r) => r.done)).toBe(true);
    expect(peak).toBe(limit);
    expect(started).toBeGreaterThan(100);
    expect(runs.filter((r) => r.value === 'done')).toHaveLength(started);
    expect((await resilience.admin.inspect({ policy: 'p' }))[0]).toMatchObject({ inUse: 0, waiting: 0 });
  });
});

describe('peer libraries’ bugs — state and hygiene', () => {
  it('20. backoff math never overflows (cockatiel #86): attempts up to 1e6 give finite delays in [0, max]', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('none', 'full', 'equal', 'decorrelated'),
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        fc.integer({ min: 1, max: 10_000 }),
        (jitter, retry, r, base) => {
          const b = new BackoffStrategy({ base, max: base * 100, multiplier: 3, jitter });
          let previous = 0;
          for (const n of [retry, retry + 1]) {
            const d = b.delay(n, previous, () => r);
            expect(Number.isFinite(d)).toBe(true);
            expect(d).toBeGreaterThanOrEqual(0);
            expect(d).toBeLessThanOrEqual(base * 100);
            previous = d;
          }
        },
      ),
      { numRuns: 300, seed: 20 },
    );
  });

  it('21. no shared mutable state leaks (cockatiel #113): mutating a rejection or a snapshot changes nothing live', async () => {
    const { resilience } = setup([policy('p', [new RateLimitStrategy({ permits: 1, per: '1s' })])]);
    await resilience.run(() => 1, { policy: 'p' });
    const first = (await errorOf(resilience.run(() => 1, { policy: 'p' }))) as { retryAfter: number };
    const expected = first.retryAfter;
    first.retryAfter = -1;
    const [snap] = await resilience.admin.inspect({ policy: 'p' });
    (snap as { rateLimitTokens: number }).rateLimitTokens = 100;
    const second = (await errorOf(resilience.run(() => 1, { policy: 'p' }))) as { retryAfter: number };
    expect(second.retryAfter).toBe(expected);
    expect(second).not.toBe(first);
  });

  it('25. no unhandled rejection from late failures: timed-out fn, hedge losers, throwing fallback, failing store', async () => {
    const { resilience, clock } = setup([
      policy('p', [new TimeoutStrategy({ timeout: 10 })], {
        hedge: new HedgeStrategy({ delay: 5, maxAttempts: 3 }),
      }),
    ]);
    const lates = Array.from({ length: 3 }, () => deferred());
    let i = 0;
    const s = settle(
      resilience.run(() => lates[i++]!.promise, {
        policy: 'p',
        fallback: () => Promise.reject(new Error('fallback too')),
      }),
    );
    await clock.advance(100);
    lates.forEach((d) => d.reject(new Error('late')));
    await clock.advance(0);
    expect((s.error as Error).message).toBe('fallback too');
    // the strict jest setup (tools/jest) fails this file on any unhandled rejection or process warning
  });
});
