import type { Resilience } from '../resilience';
import { AdaptiveThrottleStrategy } from '../strategies/adaptive-throttle-strategy';
import { BulkheadStrategy } from '../strategies/bulkhead-strategy';
import { RateLimitStrategy } from '../strategies/rate-limit-strategy';
import { RetryStrategy } from '../strategies/retry-strategy';
import type { Strategy } from '../strategies/strategy';
import { TimeoutStrategy } from '../strategies/timeout-strategy';
import { deferred, infraError, settle, setup } from './helpers';
import { breaker, codeOf, errorOf, policy } from './kit';

/**
 * Composition order proofs (SPEC §4: rate limit → bulkhead → breaker | throttle → retry → timeout, whatever the
 * listed order; resilience4j #1656, #1657, #515).
 */

const snap = async (r: Resilience) => (await r.admin.inspect({ policy: 'p' }))[0]!;
const retry = (maxAttempts = 3) =>
  new RetryStrategy({ maxAttempts, backoff: { base: 10, max: 10, jitter: 'none' } });

describe('composition order', () => {
  it('a rate-limit rejection touches neither a bulkhead slot, nor the queue, nor a breaker outcome', async () => {
    const { resilience, clock } = setup([
      policy('p', [
        breaker({ minThroughput: 1 }),
        new BulkheadStrategy({ maxConcurrency: 1, maxQueue: 5 }),
        new RateLimitStrategy({ permits: 1, per: '1h' }),
      ]),
    ]);
    const d = deferred();
    settle(resilience.run(() => d.promise, { policy: 'p' }));
    await clock.advance(0);
    for (let i = 0; i < 10; i++) {
      expect(codeOf(await errorOf(resilience.run(() => 1, { policy: 'p' })))).toBe('rate_limited');
    }
    expect(await snap(resilience)).toMatchObject({ inUse: 1, waiting: 0, breaker: { calls: 0 } });
    d.resolve(1);
    await clock.advance(0);
    expect(await snap(resilience)).toMatchObject({ inUse: 0, breaker: { calls: 1, failureRatio: 0 } });
  });

  it('a rate-limit rejection is not recorded by the adaptive throttle either', async () => {
    const { resilience } = setup(
      [
        policy('p', [
          new AdaptiveThrottleStrategy({ minThroughput: 1 }),
          new RateLimitStrategy({ permits: 1, per: '1h' }),
        ]),
      ],
      { random: () => 0 },
    );
    await resilience.run(() => 'ok', { policy: 'p' });
    for (let i = 0; i < 10; i++) await resilience.run(() => 1, { policy: 'p' }).catch(() => 0);
    expect((await snap(resilience)).throttleRejectionProbability).toBe(0); // 1 request, 1 accept
  });

  it('a bulkhead rejection spent a rate-limit token (rate limit is outside the bulkhead)', async () => {
    const { resilience } = setup([
      policy('p', [
        new BulkheadStrategy({ maxConcurrency: 1 }),
        new RateLimitStrategy({ permits: 5, per: '1h' }),
      ]),
    ]);
    settle(resilience.run(() => new Promise(() => {}), { policy: 'p' }));
    await resilience.run(() => 1, { policy: 'p' }).catch(() => 0);
    expect((await snap(resilience)).rateLimitTokens).toBe(3);
  });

  it('retry sits inside the breaker: a half-open probe that fails once and then succeeds closes it', async () => {
    const { resilience, clock, ofType } = setup([policy('p', [retry(), breaker({ minThroughput: 1 })])]);
    settle(resilience.run(() => Promise.reject(infraError()), { policy: 'p' }));
    await clock.advance(20); // three attempts, one breaker failure: open
    await clock.advance(5000);
    let attempts = 0;
    const s = settle(
      resilience.run(() => (++attempts === 1 ? Promise.reject(infraError()) : 'second attempt'), {
        policy: 'p',
      }),
    );
    await clock.advance(10);
    expect(s.value).toBe('second attempt');
    expect(ofType('breaker_state').map((e) => e.to)).toEqual(['open', 'half_open', 'closed']);
  });

  it('an open circuit is never retried by the policy retry (it is inside the breaker)', async () => {
    const { resilience, clock, ofType } = setup([policy('p', [retry(5), breaker({ minThroughput: 1 })])]);
    const s1 = settle(resilience.run(() => Promise.reject(infraError()), { policy: 'p' }));
    await clock.advance(100);
    expect(s1.done).toBe(true);
    const retriesBefore = ofType('retry').length;
    let ran = false;
    const s = settle(resilience.run(() => (ran = true), { policy: 'p' }));
    await clock.advance(1000);
    expect(codeOf(s.error)).toBe('circuit_open');
    expect(ran).toBe(false);
    expect(ofType('retry')).toHaveLength(retriesBefore);
    expect(ofType('rejected')).toHaveLength(1);
  });

  it("Ballast's own rejections are never breaker failures, whatever their kind", async () => {
    const { resilience, clock } = setup([
      policy('p', [
        breaker({ minThroughput: 1, failureRatio: 0.1 }),
        new BulkheadStrategy({ maxConcurrency: 1 }),
        new RateLimitStrategy({ permits: 3, per: '1h' }),
      ]),
    ]);
    const d = deferred();
    settle(resilience.run(() => d.promise, { policy: 'p' }));
    await resilience.run(() => 1, { policy: 'p' }).catch(() => 0); // bulkhead_full (infrastructure)
    await resilience.run(() => 1, { policy: 'p' }).catch(() => 0); // bulkhead_full
    await resilience.run(() => 1, { policy: 'p' }).catch(() => 0); // rate_limited (throttled)
    d.resolve('fine');
    await clock.advance(0);
    expect((await snap(resilience)).breaker).toEqual({ state: 'closed', calls: 1, failureRatio: 0 });
  });

  it('each retry attempt runs under its own timeout inside the retry loop', async () => {
    const { resilience, clock, ofType } = setup([
      policy('p', [new TimeoutStrategy({ timeout: 30 }), retry(3)]),
    ]);
    const s = settle(resilience.run(() => new Promise(() => {}), { policy: 'p' }));
    await clock.advance(30 + 10 + 30 + 10 + 30);
    expect(codeOf(s.error)).toBe('attempt_timeout');
    expect(ofType('attempt_timeout').map((e) => e.attempt)).toEqual([1, 2, 3]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('the listed order never matters: any permutation behaves the same', async () => {
    const parts = (): Strategy[] => [
      new TimeoutStrategy({ timeout: 30 }),
      retry(2),
      breaker({ minThroughput: 2 }),
      new BulkheadStrategy({ maxConcurrency: 1 }),
      new RateLimitStrategy({ permits: 4, per: '1h' }),
    ];
    const scenario = async (strategies: Strategy[]) => {
      const { resilience, clock, events } = setup([policy('p', strategies)]);
      const runs = [
        settle(resilience.run(() => new Promise(() => {}), { policy: 'p' })),
        settle(resilience.run(() => 1, { policy: 'p' })),
      ];
      await clock.advance(100);
      runs.push(settle(resilience.run(() => Promise.reject(infraError()), { policy: 'p' })));
      await clock.advance(100);
      runs.push(
        settle(resilience.run(() => 1, { policy: 'p' })),
        settle(resilience.run(() => 1, { policy: 'p' })),
      );
      await clock.advance(100);
      const outcomes = runs.map((r) => (r.error as { code?: string } | undefined)?.code ?? r.value);
      return { outcomes, events: events.map((e) => e.type) };
    };
    const canonical = await scenario(parts());
    expect(canonical.outcomes).toEqual([
      'attempt_timeout',
      'bulkhead_full',
      'ECONNRESET',
      'circuit_open',
      'rate_limited',
    ]);
    expect(await scenario(parts().reverse())).toEqual(canonical);
    const shuffled = parts();
    expect(await scenario([shuffled[2]!, shuffled[0]!, shuffled[4]!, shuffled[1]!, shuffled[3]!])).toEqual(
      canonical,
    );
  });
});
