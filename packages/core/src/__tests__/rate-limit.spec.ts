import { isResilienceError } from '../errors/resilience-error';
import { RateLimitStrategy } from '../strategies/rate-limit-strategy';
import { RetryStrategy } from '../strategies/retry-strategy';
import { settle, setup } from './helpers';
import { errorOf, policy } from './kit';

/** Rate limit through `run()` (SPEC §4, §11.10): a token bucket per (policy, route) that never waits. */

describe('rate limit', () => {
  it('admits a burst, then rejects at once with throttled / rate_limited and retryAfter; fn never runs', async () => {
    const { resilience, clock, ofType } = setup([
      policy('p', [new RateLimitStrategy({ permits: 10, per: '1s', burst: 3 })]),
    ]);
    for (let i = 0; i < 3; i++)
      await expect(resilience.run(() => i, { policy: 'p', route: 'r' })).resolves.toBe(i);
    let ran = false;
    const err = await errorOf(resilience.run(() => (ran = true), { policy: 'p', route: 'r' }));
    expect(ran).toBe(false);
    expect(err).toMatchObject({
      kind: 'throttled',
      code: 'rate_limited',
      retryable: true,
      retryAfter: 100, // one token per 100 ms
      policy: 'p',
      route: 'r',
    });
    expect(clock.pendingTimers()).toBe(0); // never waits: nothing was scheduled
    expect(ofType('rejected')).toEqual([
      { type: 'rejected', policy: 'p', route: 'r', code: 'rate_limited', retryAfter: 100 },
    ]);
    expect(ofType('call').map((e) => e.outcome)).toEqual(['success', 'success', 'success', 'rejected']);
    expect(ofType('call').at(-1)).toMatchObject({ code: 'rate_limited', duration: 0 });
  });

  it('retryAfter is the ms until the next token and always > 0; the bucket refills continuously', async () => {
    const { resilience, clock } = setup([policy('p', [new RateLimitStrategy({ permits: 4, per: '1s' })])]);
    for (let i = 0; i < 4; i++) await resilience.run(() => i, { policy: 'p' });
    await clock.advance(100);
    const e1 = await errorOf(resilience.run(() => 1, { policy: 'p' }));
    expect(isResilienceError(e1) && e1.retryAfter).toBeCloseTo(150, 6);
    await clock.advance(149.5);
    const e2 = await errorOf(resilience.run(() => 1, { policy: 'p' }));
    expect(isResilienceError(e2) && e2.retryAfter).toBeGreaterThan(0);
    expect(isResilienceError(e2) && e2.retryAfter).toBeLessThanOrEqual(1);
    await clock.advance(0.5);
    await expect(resilience.run(() => 'refilled', { policy: 'p' })).resolves.toBe('refilled');
    await clock.advance(10_000);
    const [snap] = await resilience.admin.inspect({ policy: 'p' });
    expect(snap?.rateLimitTokens).toBe(4); // capped at burst
  });

  it('keys state by (policy, route): each route and the route-less key have their own bucket', async () => {
    const { resilience } = setup([
      policy('p', [new RateLimitStrategy({ permits: 1, per: '1m' })]),
      policy('q', [new RateLimitStrategy({ permits: 1, per: '1m' })]),
    ]);
    await resilience.run(() => 1, { policy: 'p', route: 'a' });
    await expect(resilience.run(() => 1, { policy: 'p', route: 'a' })).rejects.toMatchObject({
      code: 'rate_limited',
    });
    await expect(resilience.run(() => 'b', { policy: 'p', route: 'b' })).resolves.toBe('b');
    await expect(resilience.run(() => 'none', { policy: 'p' })).resolves.toBe('none');
    await expect(resilience.run(() => 'q', { policy: 'q', route: 'a' })).resolves.toBe('q');
  });

  it('counts every call, whatever its outcome (a failed call spent its token)', async () => {
    const { resilience } = setup([policy('p', [new RateLimitStrategy({ permits: 2, per: '1m' })])]);
    await resilience.run(() => Promise.reject(new Error('x')), { policy: 'p' }).catch(() => undefined);
    await resilience.run(() => 1, { policy: 'p' });
    await expect(resilience.run(() => 1, { policy: 'p' })).rejects.toMatchObject({ code: 'rate_limited' });
  });

  it('to wait instead of failing, an outer retry on throttled honours the rate limit retryAfter', async () => {
    const { resilience, clock, ofType } = setup([
      policy('limited', [new RateLimitStrategy({ permits: 1, per: '2s' })]),
      policy('outer', [
        new RetryStrategy({
          maxAttempts: 3,
          retryOn: ['throttled'],
          // max: the longest the outer retry waits for a token (a longer retryAfter ends the retries)
          backoff: { base: 10, max: '2s', jitter: 'none' },
        }),
      ]),
    ]);
    const inner = (v: string) => () => resilience.run(() => v, { policy: 'limited' });
    await expect(resilience.run(inner('first'), { policy: 'outer' })).resolves.toBe('first');
    const s = settle(resilience.run(inner('second'), { policy: 'outer' }));
    await clock.advance(0);
    expect(ofType('retry').map((e) => e.delay)).toEqual([2000]); // the hint, not the 10 ms backoff
    await clock.advance(1999);
    expect(s.done).toBe(false);
    await clock.advance(1);
    expect(s.value).toBe('second');
    expect(clock.pendingTimers()).toBe(0);
  });
});
