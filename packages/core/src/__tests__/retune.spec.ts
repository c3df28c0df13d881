import { AdaptiveBulkheadStrategy } from '../strategies/adaptive-bulkhead-strategy';
import { BulkheadStrategy } from '../strategies/bulkhead-strategy';
import { HedgeStrategy } from '../strategies/hedge-strategy';
import { RateLimitStrategy } from '../strategies/rate-limit-strategy';
import { TimeoutStrategy } from '../strategies/timeout-strategy';
import { deferred, infraError, settle, setup } from './helpers';
import { breaker, codeOf, errorOf, hang, policy } from './kit';

/** `admin.retune` (SPEC §6): validates first, hot-swaps by name, drops adaptive state, in-flight calls finish. */

describe('admin.retune', () => {
  it('validates first: an invalid spec is rejected with its JSON path and the old policy stays in force', async () => {
    const { resilience } = setup([policy('p', [new RateLimitStrategy({ permits: 1, per: '1h' })])]);
    const before = resilience.policy('p');
    const err = await errorOf(
      resilience.admin.retune({
        name: 'p',
        strategies: [
          {
            type: 'circuitBreaker',
            failureRatio: 2,
            samplingWindow: '10s',
            minThroughput: 1,
            breakDuration: '1s',
          },
        ],
      }),
    );
    expect(err).toMatchObject({ kind: 'configuration', code: 'invalid_policy' });
    expect(String((err as Error).message)).toContain('strategies[0].failureRatio');
    expect(resilience.policy('p')).toBe(before);
    await resilience.run(() => 1, { policy: 'p' });
    await expect(resilience.run(() => 1, { policy: 'p' })).rejects.toMatchObject({ code: 'rate_limited' });
  });

  it('hot-swaps by name from a policy or a JSON spec (durations as strings)', async () => {
    const { resilience, clock } = setup([policy('p', [new TimeoutStrategy({ timeout: 100 })])]);
    await resilience.admin.retune({ name: 'p', strategies: [{ type: 'timeout', timeout: '1s' }] });
    const s = settle(resilience.run(hang, { policy: 'p' }));
    await clock.advance(999);
    expect(s.done).toBe(false);
    await clock.advance(1);
    expect(codeOf(s.error)).toBe('attempt_timeout');
    const replacement = policy('p', [new RateLimitStrategy({ permits: 1, per: '1h' })]);
    await resilience.admin.retune(replacement);
    expect(resilience.policy('p')).toBe(replacement);
    await resilience.run(() => 1, { policy: 'p' });
    await expect(resilience.run(() => 1, { policy: 'p' })).rejects.toMatchObject({ code: 'rate_limited' });
  });

  it('calls in flight finish on the state they captured (their timeout, their bulkhead)', async () => {
    const { resilience, clock } = setup([
      policy('p', [new TimeoutStrategy({ timeout: 100 }), new BulkheadStrategy({ maxConcurrency: 1 })]),
    ]);
    const old = settle(resilience.run(hang, { policy: 'p' }));
    await clock.advance(10);
    await resilience.admin.retune(
      policy('p', [
        new TimeoutStrategy({ timeout: 1000 }),
        new BulkheadStrategy({ maxConcurrency: 1, maxQueue: 1 }),
      ]),
    );
    const d = deferred<string>();
    let started = false;
    const fresh = settle(
      resilience.run(
        () => {
          started = true;
          return d.promise;
        },
        { policy: 'p' },
      ),
    );
    await clock.advance(0);
    expect(started).toBe(false); // the old call still holds the only slot: the new bulkhead counts it
    await clock.advance(90);
    expect(codeOf(old.error)).toBe('attempt_timeout'); // still its own 100 ms
    expect(started).toBe(true); // its slot went to the waiter
    expect(fresh.done).toBe(false);
    d.resolve('new');
    await clock.advance(0);
    expect(fresh.value).toBe('new');
    const [snap] = await resilience.admin.inspect({ policy: 'p' });
    expect(snap?.inUse).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('drops adaptive state: an AIMD limit and the hedge latency estimate start over', async () => {
    const make = () =>
      policy(
        'p',
        [
          new AdaptiveBulkheadStrategy({
            latencyThreshold: 10,
            maxConcurrency: 8,
            backoffRatio: 0.5,
            cooldown: 0,
          }),
        ],
        {
          hedge: new HedgeStrategy({ delay: 500, maxAttempts: 2, adaptiveDelayQuantile: 0.5 }),
        },
      );
    const { resilience, clock } = setup([make()]);
    for (let i = 0; i < 6; i++) {
      const s = settle(
        resilience.run(
          async () => {
            await clock.sleep(50);
            return i;
          },
          { policy: 'p' },
        ),
      );
      await clock.advance(50);
      expect(s.value).toBe(i);
    }
    let [snap] = await resilience.admin.inspect({ policy: 'p' });
    expect(snap?.concurrencyLimit).toBeLessThan(8);
    expect(snap?.hedgeDelay).toBe(50);
    await resilience.admin.retune(make());
    await resilience.run(() => 'touch', { policy: 'p' });
    [snap] = await resilience.admin.inspect({ policy: 'p' });
    expect(snap).toMatchObject({ concurrencyLimit: 8, hedgeDelay: 500 });
  });

  it('drops the adaptive bulkhead latency digest: a fast first sample after a retune does not shrink the limit', async () => {
    const make = () =>
      policy('p', [
        new AdaptiveBulkheadStrategy({
          latencyThreshold: 10,
          latencyQuantile: 0.5,
          window: 100,
          maxConcurrency: 8,
          backoffRatio: 0.5,
          cooldown: '1h', // one decrease, then the digest keeps learning the slow latency
        }),
      ]);
    const { resilience, clock } = setup([make()]);
    const callTaking = async (ms: number) => {
      const s = settle(
        resilience.run(
          async () => {
            await clock.sleep(ms);
            return ms;
          },
          { policy: 'p' },
        ),
      );
      await clock.advance(ms);
      expect(s.value).toBe(ms);
    };
    for (let i = 0; i < 20; i++) await callTaking(50);
    let [snap] = await resilience.admin.inspect({ policy: 'p' });
    expect(snap?.concurrencyLimit).toBe(4);
    await resilience.admin.retune(make());
    [snap] = await resilience.admin.inspect({ policy: 'p' });
    expect(snap?.concurrencyLimit).toBe(8);
    await callTaking(1);
    [snap] = await resilience.admin.inspect({ policy: 'p' });
    expect(snap?.concurrencyLimit).toBe(8);
  });

  it('keeps event subscriptions and forced-open flags (resilience4j #1116)', async () => {
    const { resilience, ofType } = setup([policy('p', [])]);
    await resilience.admin.forceOpen('p', 'r');
    await resilience.admin.retune(policy('p', [new TimeoutStrategy({ timeout: 10 })]));
    await expect(resilience.run(() => 1, { policy: 'p', route: 'r' })).rejects.toMatchObject({
      code: 'resilience_forced_open',
    });
    await resilience.run(() => 1, { policy: 'p', route: 'other' });
    expect(ofType('call').map((e) => e.outcome)).toEqual(['rejected', 'success']);
    await resilience.admin.forceOpen('p');
    await resilience.admin.retune(policy('p', []));
    await expect(resilience.run(() => 1, { policy: 'p', route: 'brand new' })).rejects.toMatchObject({
      code: 'resilience_forced_open',
    });
  });

  it('reaches store parameters: a new breaker threshold applies to the breaker state already in the store', async () => {
    const { resilience } = setup([policy('p', [breaker({ minThroughput: 5, failureRatio: 1 })])]);
    for (let i = 0; i < 2; i++)
      await resilience.run(() => Promise.reject(infraError()), { policy: 'p' }).catch(() => 0);
    await resilience.admin.retune(policy('p', [breaker({ minThroughput: 3, failureRatio: 1 })]));
    await resilience.run(() => Promise.reject(infraError()), { policy: 'p' }).catch(() => 0);
    await expect(resilience.run(() => 1, { policy: 'p' })).rejects.toMatchObject({ code: 'circuit_open' });
  });

  it('a retuned rate limit keeps the tokens a key holds (no extra burst) and applies the new rate', async () => {
    const { resilience, clock } = setup([policy('p', [new RateLimitStrategy({ permits: 2, per: '1s' })])]);
    await resilience.run(() => 1, { policy: 'p' });
    await resilience.run(() => 1, { policy: 'p' });
    await resilience.admin.retune(policy('p', [new RateLimitStrategy({ permits: 10, per: '1s' })]));
    await expect(resilience.run(() => 1, { policy: 'p' })).rejects.toMatchObject({ code: 'rate_limited' });
    await clock.advance(100); // the new rate: one token per 100 ms
    await expect(resilience.run(() => 'refilled', { policy: 'p' })).resolves.toBe('refilled');
  });

  it('a breaker tripped by a call in flight across a retune pins its key: LRU eviction cannot forget it', async () => {
    const p = () => policy('p', [breaker({ minThroughput: 1, breakDuration: '1m' })]);
    const { resilience, clock } = setup([p()], { maxKeysPerPolicy: 1 });
    const slow = deferred();
    const inFlight = settle(resilience.run(() => slow.promise, { policy: 'p', route: 'a' }));
    await resilience.admin.retune(p());
    slow.reject(infraError()); // finishes on the state it captured, and trips a's breaker
    await clock.advance(0);
    expect(inFlight.done).toBe(true);
    await resilience.run(() => 1, { policy: 'p', route: 'b' }); // a new key: an idle one may be evicted, not a
    expect(codeOf(await errorOf(resilience.run(() => 1, { policy: 'p', route: 'a' })))).toBe('circuit_open');
  });

  it('inspect still lists the routes seen before a retune (with their open breakers)', async () => {
    const { resilience } = setup([policy('p', [breaker({ minThroughput: 1 })])]);
    await resilience.run(() => Promise.reject(infraError()), { policy: 'p', route: 'a' }).catch(() => 0);
    await resilience.run(() => 1, { policy: 'p', route: 'b' });
    await resilience.admin.retune(policy('p', [breaker({ minThroughput: 2 })]));
    const snaps = await resilience.admin.inspect({ policy: 'p' });
    expect(snaps.map((s) => [s.route, s.breaker?.state])).toEqual([
      ['a', 'open'],
      ['b', 'closed'],
    ]);
  });
});
