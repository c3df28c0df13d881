import type { Resilience } from '../resilience';
import { AdaptiveThrottleStrategy } from '../strategies/adaptive-throttle-strategy';
import { RetryStrategy } from '../strategies/retry-strategy';
import { infraError, settle, setup } from './helpers';
import { hang, kindError, policy, trackedController } from './kit';

/**
 * Adaptive throttle through `run()` (SPEC §3, §4, §10): `p = max(0, (requests − k·accepts)/(requests + 1))` once
 * `minThroughput` requests were seen; only healthy outcomes are accepts; cancelled calls are not recorded.
 */

// random = 0 sheds whenever p > 0, so the tests read the probability without sampling noise.
const throttled = (o: { k?: number; window?: string; minThroughput?: number } = {}, random = () => 0) =>
  setup([policy('p', [new AdaptiveThrottleStrategy({ k: 2, window: '1m', minThroughput: 10, ...o })])], {
    random,
  });

const probability = async (r: Resilience) =>
  (await r.admin.inspect({ policy: 'p' }))[0]?.throttleRejectionProbability;

const outcome = (r: Resilience, e: unknown) =>
  r.run(() => Promise.reject(e), { policy: 'p' }).catch((x: unknown) => x);

describe('adaptive throttle', () => {
  it('never sheds below minThroughput, even when every call fails', async () => {
    const { resilience } = throttled();
    for (let i = 0; i < 9; i++) await outcome(resilience, infraError());
    expect(await probability(resilience)).toBe(0);
    await expect(resilience.run(() => 'still admitted', { policy: 'p' })).resolves.toBe('still admitted');
  });

  it('sheds with throttled / adaptive_throttle at p = (requests − k·accepts)/(requests + 1), emitting throttle_reject', async () => {
    const { resilience, ofType } = throttled();
    for (let i = 0; i < 10; i++) await outcome(resilience, infraError());
    expect(await probability(resilience)).toBeCloseTo(10 / 11, 12);
    let ran = false;
    const err = await resilience.run(() => (ran = true), { policy: 'p' }).catch((e: unknown) => e);
    await resilience.run(() => (ran = true), { policy: 'p' }).catch(() => undefined);
    expect(ran).toBe(false);
    expect(err).toMatchObject({ kind: 'throttled', code: 'adaptive_throttle', policy: 'p' });
    expect(ofType('throttle_reject')).toHaveLength(2);
    expect(ofType('throttle_reject')[0]?.probability).toBeCloseTo(10 / 11, 12);
    expect(ofType('rejected').map((e) => e.code)).toEqual(['adaptive_throttle', 'adaptive_throttle']);
    // a shed call counts as a request: 12 requests, 0 accepts
    expect(await probability(resilience)).toBeCloseTo(12 / 13, 12);
  });

  it('counts only healthy outcomes as accepts: caller errors accept, overload and failures do not', async () => {
    const healthy = throttled();
    for (let i = 0; i < 5; i++) await outcome(healthy.resilience, kindError('validation'));
    for (let i = 0; i < 5; i++)
      await outcome(healthy.resilience, Object.assign(new Error(), { status: 404 }));
    expect(await probability(healthy.resilience)).toBe(0); // 10 requests, 10 accepts

    const overload = throttled();
    for (let i = 0; i < 10; i++)
      await outcome(overload.resilience, Object.assign(new Error(), { status: 429 }));
    expect(await probability(overload.resilience)).toBeCloseTo(10 / 11, 12); // 429s are not accepts

    const mixed = throttled();
    for (let i = 0; i < 6; i++) await outcome(mixed.resilience, infraError());
    for (let i = 0; i < 4; i++) await mixed.resilience.run(() => 'ok', { policy: 'p' });
    expect(await probability(mixed.resilience)).toBeCloseTo((10 - 2 * 4) / 11, 12);
  });

  it('seven failures and three successes shed at (10 − 2·3)/11', async () => {
    const { resilience } = throttled({ k: 2 });
    for (let i = 0; i < 7; i++) await outcome(resilience, infraError());
    for (let i = 0; i < 3; i++) await resilience.run(() => 'ok', { policy: 'p' });
    expect(await probability(resilience)).toBeCloseTo((10 - 2 * 3) / 11, 12);
  });

  it('a cancelled call is not recorded at all', async () => {
    const { resilience, clock } = throttled();
    for (let i = 0; i < 9; i++) await outcome(resilience, infraError());
    const t = trackedController();
    const s = settle(resilience.run(hang, { policy: 'p', signal: t.signal }));
    await clock.advance(0);
    t.ac.abort(new Error('bye'));
    await clock.advance(0);
    expect(s.done).toBe(true);
    expect(await probability(resilience)).toBe(0); // still 9 requests < minThroughput
  });

  it('retry inside the throttle: one logical call is one request', async () => {
    const { resilience, clock } = setup(
      [
        policy('p', [
          new AdaptiveThrottleStrategy({ minThroughput: 3, window: '1m' }),
          new RetryStrategy({ maxAttempts: 5, backoff: { base: 1, max: 1, jitter: 'none' } }),
        ]),
      ],
      { random: () => 0 },
    );
    const s = settle(resilience.run(() => Promise.reject(infraError()), { policy: 'p' }));
    await clock.advance(10);
    expect(s.done).toBe(true);
    expect(await probability(resilience)).toBe(0); // 1 request (5 attempts) < minThroughput 3
  });

  it('the counts leave the rolling window after `window` ms', async () => {
    const { resilience, clock } = throttled({ window: '1m' });
    for (let i = 0; i < 10; i++) await outcome(resilience, infraError());
    expect(await probability(resilience)).toBeGreaterThan(0);
    await clock.advance(60_000);
    expect(await probability(resilience)).toBe(0);
    await expect(resilience.run(() => 'admitted', { policy: 'p' })).resolves.toBe('admitted');
  });

  it('sheds probabilistically with the injected random', async () => {
    const { resilience } = throttled({}, () => 0.95); // above p = 10/11 ≈ 0.909: admitted
    for (let i = 0; i < 10; i++) await outcome(resilience, infraError());
    await expect(resilience.run(() => 'lucky', { policy: 'p' })).resolves.toBe('lucky');
  });
});
