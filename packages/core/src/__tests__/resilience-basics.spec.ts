import { ResilienceError, isResilienceError } from '../errors/resilience-error';
import { ResiliencePolicy } from '../policy/resilience-policy';
import { CircuitBreakerStrategy } from '../strategies/circuit-breaker-strategy';
import { RateLimitStrategy } from '../strategies/rate-limit-strategy';
import { RetryStrategy } from '../strategies/retry-strategy';
import { TimeoutStrategy } from '../strategies/timeout-strategy';
import { FallbackStrategy } from '../strategies/fallback-strategy';
import { currentSignal } from '../context/context-storage';
import { withDeadline } from '../context/deadline';
import { Resilience } from '../resilience';
import { deferred, infraError, settle, setup } from './helpers';

const plain = (name: string) => new ResiliencePolicy({ name, strategies: [] });

describe('Resilience.run basics', () => {
  it('returns the value and hands fn a context with attempt, policy and route', async () => {
    const { resilience } = setup([plain('p')]);
    const seen: unknown[] = [];
    const v = await resilience.run(
      (ctx) => {
        seen.push(ctx.attempt, ctx.policy, ctx.route);
        return 42;
      },
      { policy: 'p', route: 'r' },
    );
    expect(v).toBe(42);
    expect(seen).toEqual([1, 'p', 'r']);
  });

  it('rejects an unknown policy with configuration / unknown_policy', async () => {
    const { resilience } = setup([]);
    await expect(resilience.run(() => 1, { policy: 'nope' })).rejects.toMatchObject({
      kind: 'configuration',
      code: 'unknown_policy',
    });
    // Like every rejection the executor raises, it names the policy and route (SPEC §11.2).
    await expect(resilience.run(() => 1, { policy: 'nope', route: 'r' })).rejects.toMatchObject({
      code: 'unknown_policy',
      policy: 'nope',
      route: 'r',
    });
  });

  it('has the built-in transient and occ policies and lets users override them', async () => {
    const { resilience } = setup([]);
    expect(resilience.policy('transient')).toBeDefined();
    expect(resilience.policy('occ')).toBeDefined();
    const mine = new ResiliencePolicy({ name: 'transient', strategies: [] });
    const r2 = new Resilience({ policies: [mine] });
    expect(r2.policy('transient')).toBe(mine);
  });

  it('reports all invalid Resilience options together', () => {
    expect(() => new Resilience({ policies: [{} as never], maxKeysPerPolicy: 0 })).toThrow(
      /policies\[0\] must be a ResiliencePolicy.*maxKeysPerPolicy must be an integer ≥ 1, got 0/,
    );
  });

  it('validates clock, classify and stores at construction, not on the first call', () => {
    let error: unknown;
    try {
      new Resilience({
        clock: 5 as never,
        classify: 'x' as never,
        stores: { circuitBreaker: 42 as never, rateLimit: { take: () => 0 } as never },
      });
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ kind: 'configuration', code: 'invalid_policy' });
    expect((error as Error).message).toBe(
      'Invalid Resilience options: ' +
        "classify must be a function (error) => ExceptionKind | undefined, got 'x'; " +
        'clock must be a Clock { now, setTimeout, clearTimeout }, got 5; ' +
        'stores.circuitBreaker must be a store with acquire, record, inspect, reset, got 42; ' +
        'stores.rateLimit must be a store with take, tokens, reset, got { take: a function }',
    );
    expect(() => new Resilience({ stores: 7 as never })).toThrow(
      'stores must be an object { circuitBreaker?, rateLimit?, latencyDigest?, control? }, got 7',
    );
    expect(() => new Resilience({ clock: { now: () => 0 } as never })).toThrow(/clock must be a Clock/);
  });

  it('exposes the running call signal through currentSignal() and none outside (a call that can be aborted: timeout)', async () => {
    const { resilience } = setup([
      new ResiliencePolicy({ name: 'p', strategies: [new TimeoutStrategy({ timeout: 1000 })] }),
    ]);
    expect(currentSignal()).toBeUndefined();
    let inner: AbortSignal | undefined;
    let ctxSignal: AbortSignal | undefined;
    await resilience.run(
      async (ctx) => {
        await Promise.resolve();
        inner = currentSignal();
        ctxSignal = ctx.signal;
      },
      { policy: 'p' },
    );
    expect(inner).toBe(ctxSignal);
    expect(inner?.aborted).toBe(false);
  });
});

describe('ambientContext', () => {
  it('false: attempts run without a frame (no currentSignal), while deadlines bound by the caller still apply', async () => {
    const { resilience, clock } = setup([plain('p')], { ambientContext: false });
    let inner: AbortSignal | undefined = new AbortController().signal;
    await resilience.run(
      async () => {
        await Promise.resolve();
        inner = currentSignal();
      },
      { policy: 'p' },
    );
    expect(inner).toBeUndefined();
    let signal: AbortSignal | undefined;
    const s = settle(
      withDeadline(
        20,
        () =>
          resilience.run(
            (ctx) => {
              signal = ctx.signal;
              return new Promise(() => {});
            },
            { policy: 'p' },
          ),
        clock,
      ),
    );
    await clock.advance(20);
    expect(s.error).toMatchObject({ code: 'deadline_exceeded' });
    expect(signal?.aborted).toBe(true);
  });

  it('must be a boolean', () => {
    expect(() => new Resilience({ ambientContext: 'yes' as never })).toThrow(
      /ambientContext must be a boolean, got 'yes'/,
    );
  });
});

describe('composition order', () => {
  it('a rate-limit rejection never consumes a breaker outcome', async () => {
    const policy = new ResiliencePolicy({
      name: 'p',
      strategies: [
        new CircuitBreakerStrategy({
          failureRatio: 0.5,
          samplingWindow: '10s',
          minThroughput: 2,
          breakDuration: '5s',
        }),
        new RateLimitStrategy({ permits: 1, per: '1s' }),
      ],
    });
    const { resilience, ofType } = setup([policy]);
    await expect(resilience.run(() => Promise.reject(infraError()), { policy: 'p' })).rejects.toThrow('boom');
    for (let i = 0; i < 5; i++) {
      await expect(resilience.run(() => 1, { policy: 'p' })).rejects.toMatchObject({ code: 'rate_limited' });
    }
    const [snap] = await resilience.admin.inspect({ policy: 'p' });
    expect(snap?.breaker).toEqual({ state: 'closed', failureRatio: 1, calls: 1 });
    expect(ofType('rejected').map((e) => e.code)).toEqual(Array(5).fill('rate_limited'));
    const err = await resilience.run(() => 1, { policy: 'p' }).catch((e: unknown) => e);
    expect(isResilienceError(err) && err.retryAfter).toBeGreaterThan(0);
  });

  it('retry sits inside the breaker: one logical call is one breaker outcome', async () => {
    const policy = new ResiliencePolicy({
      name: 'p',
      strategies: [
        new RetryStrategy({ maxAttempts: 3, backoff: { base: 1, max: 1, jitter: 'none' } }),
        new CircuitBreakerStrategy({
          failureRatio: 1,
          samplingWindow: '10s',
          minThroughput: 10,
          breakDuration: '5s',
        }),
      ],
    });
    const { resilience, clock } = setup([policy]);
    let calls = 0;
    const p = resilience.run(
      () => {
        calls++;
        return Promise.reject(infraError());
      },
      { policy: 'p' },
    );
    const s = settle(p);
    await clock.advance(10);
    expect(s.error).toBeInstanceOf(Error);
    expect(calls).toBe(3);
    const [snap] = await resilience.admin.inspect({ policy: 'p' });
    expect(snap?.breaker?.calls).toBe(1);
  });

  it('each retry attempt gets its own timeout and a fresh signal', async () => {
    const policy = new ResiliencePolicy({
      name: 'p',
      strategies: [
        new TimeoutStrategy({ timeout: 100 }),
        new RetryStrategy({ maxAttempts: 3, backoff: { base: 10, max: 10, jitter: 'none' } }),
      ],
    });
    const { resilience, clock, ofType } = setup([policy]);
    const signals: AbortSignal[] = [];
    const p = settle(
      resilience.run(
        (ctx) => {
          signals.push(ctx.signal);
          return new Promise(() => {}); // ignores its signal
        },
        { policy: 'p' },
      ),
    );
    await clock.advance(100);
    expect(signals).toHaveLength(1);
    expect(signals[0]!.aborted).toBe(true);
    await clock.advance(10);
    expect(signals).toHaveLength(2);
    expect(signals[1]!.aborted).toBe(false);
    await clock.advance(100 + 10 + 100);
    expect(p.done).toBe(true);
    expect(p.error).toMatchObject({ kind: 'infrastructure', code: 'attempt_timeout' });
    expect(signals.map((s) => s.aborted)).toEqual([true, true, true]);
    expect((signals[0]!.reason as ResilienceError).code).toBe('attempt_timeout');
    expect(ofType('attempt_timeout')).toHaveLength(3);
    expect(ofType('retry').map((e) => e.attempt)).toEqual([2, 3]);
    expect(clock.pendingTimers()).toBe(0);
  });
});

describe('cancellation', () => {
  it('the caller abort rejects at once with its reason, even if fn ignores the signal', async () => {
    const { resilience, clock } = setup([plain('p')]);
    const ac = new AbortController();
    let signal: AbortSignal | undefined;
    const s = settle(
      resilience.run(
        (ctx) => {
          signal = ctx.signal;
          return new Promise(() => {});
        },
        { policy: 'p', signal: ac.signal },
      ),
    );
    await clock.advance(0);
    const reason = new Error('caller gave up');
    ac.abort(reason);
    await clock.advance(0);
    expect(s.error).toBe(reason);
    expect(signal?.aborted).toBe(true);
    expect(signal?.reason).toBe(reason);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('a deadline bound with withDeadline gates the call and aborts it when it expires', async () => {
    const policy = new ResiliencePolicy({ name: 'p', strategies: [new RetryStrategy({ maxAttempts: 5 })] });
    const { resilience, clock } = setup([policy]);
    let signal: AbortSignal | undefined;
    const s = settle(
      withDeadline(
        50,
        () =>
          resilience.run(
            (ctx) => {
              signal = ctx.signal;
              return new Promise(() => {});
            },
            { policy: 'p' },
          ),
        clock,
      ),
    );
    await clock.advance(49);
    expect(s.done).toBe(false);
    await clock.advance(1);
    expect(s.error).toMatchObject({ kind: 'timeout', code: 'deadline_exceeded' });
    expect(signal?.aborted).toBe(true);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('retry never sleeps past the deadline: the real error is thrown at once', async () => {
    const policy = new ResiliencePolicy({
      name: 'p',
      strategies: [new RetryStrategy({ maxAttempts: 5, backoff: { base: 100, max: 100, jitter: 'none' } })],
    });
    const { resilience, clock } = setup([policy]);
    const s = settle(
      withDeadline(
        50,
        () => resilience.run(() => Promise.reject(infraError('real')), { policy: 'p' }),
        clock,
      ),
    );
    await clock.advance(0);
    expect(s.error).toMatchObject({ message: 'real' });
  });
});

describe('fallback', () => {
  it("per-call fallback wins over the policy's; the policy's respects `on`", async () => {
    const policy = new ResiliencePolicy({
      name: 'p',
      strategies: [],
      fallback: new FallbackStrategy({ fallback: () => 'policy', on: ['infrastructure'] }),
    });
    const { resilience, ofType } = setup([policy]);
    await expect(resilience.run(() => Promise.reject(infraError()), { policy: 'p' })).resolves.toBe('policy');
    await expect(
      resilience.run(() => Promise.reject(infraError()), { policy: 'p', fallback: () => 'call' }),
    ).resolves.toBe('call');
    await expect(resilience.run(() => Promise.reject(new Error('x')), { policy: 'p' })).rejects.toThrow('x');
    expect(ofType('fallback')).toHaveLength(2);
  });
});

describe('timers', () => {
  it('holds no timer once every call has settled', async () => {
    const policy = new ResiliencePolicy({ name: 'p', strategies: [new TimeoutStrategy({ timeout: '1s' })] });
    const { resilience, clock } = setup([policy]);
    const ds = [deferred(), deferred(), deferred()];
    const ps = ds.map((d) => resilience.run(() => d.promise, { policy: 'p' }));
    await clock.advance(0); // the queue arms its one timer a few promise hops after the burst
    expect(clock.pendingTimers()).toBe(1);
    ds.forEach((d, i) => d.resolve(i));
    await expect(Promise.all(ps)).resolves.toEqual([0, 1, 2]);
    expect(clock.pendingTimers()).toBe(0);
  });
});
