import {
  InMemoryRateLimitStore,
  stateKey,
  type RateLimitParams,
  type RateLimitResult,
  type StateKey,
} from '@ballast/core';
import { seededRandom } from '@ballast/testing';
import type { Redis } from 'ioredis';
import {
  RUN_REDIS_TESTS,
  cleanUp,
  newClient,
  reportRedisUnreachable,
  requireRedis,
  uniquePrefix,
} from './__tests__/redis-test-env';
import { RedisRateLimitStore } from './redis-rate-limit-store';

// The rate-limit script is the GCRA form of @ballast/token-bucket and promises to follow core's in-memory store
// (one TokenBucket per key) line for line. These tests hold the two side by side on the caller's clock
// (deterministic): the same calls on the same keys at the same `now` — takes, reads, retunes, resets, clock steps
// back — must get the same answers.

/**
 * Tokens and retryAfter must agree to a relative 1e-12. The script replies numbers as strings printed with
 * `%.17g`, which round-trips every double, and its arguments reach it as JS's shortest round-trip decimal, so
 * the same arithmetic in the same order gives the same bits; in practice the answers are identical. The slack only
 * absorbs a last-place difference a libm or `strtod` might make; any real divergence is far larger — a different
 * order of operations on an epoch-ms clock moves the tokens by an ulp of the clock (2⁻¹² ms) over ms per token,
 * ≥ 1e-7 tokens for every rate here, and the token bucket's own admission tolerance is 1e-9 tokens.
 */
const REL = 1e-12;
const close = (a: number, b: number): boolean =>
  a === b ||
  (Number.isFinite(a) &&
    Number.isFinite(b) &&
    Math.abs(a - b) <= REL * Math.max(1, Math.abs(a), Math.abs(b)));

/** A plain copy (the in-memory store reuses its result objects), with the numbers checked by {@link close}. */
function expectSame(r: RateLimitResult, m: RateLimitResult, where: () => string): void {
  const show = (x: RateLimitResult): string =>
    JSON.stringify(x, (_, v: unknown) => (v === Infinity ? 'Infinity' : v));
  const fail = (): string => `${where()}: redis ${show(r)} ≠ memory ${show(m)}`;
  if (r.ok !== m.ok || !close(r.tokens, m.tokens)) throw new Error(fail());
  if (!r.ok && !m.ok && !close(r.retryAfter, m.retryAfter)) throw new Error(fail());
}

/** Rates that divide evenly and not, fractional and large bursts, and fast buckets whose clock rounding matters. */
const PLIST: readonly RateLimitParams[] = [
  { permits: 10, per: 1000, burst: 10 },
  { permits: 3, per: 1000, burst: 5 },
  { permits: 7, per: 100, burst: 2 },
  { permits: 1, per: 250, burst: 1 },
  { permits: 2.5, per: 1000, burst: 3.5 },
  { permits: 1024, per: 1, burst: 4 },
  { permits: 100_000, per: 1000, burst: 10 },
  { permits: 3, per: 10, burst: 30 },
];

if (RUN_REDIS_TESTS) {
  describe('RedisRateLimitStore matches core’s in-memory store', () => {
    jest.setTimeout(60_000);
    const prefix = uniquePrefix('rl-parity');
    let client: Redis;
    beforeAll(async () => {
      client = newClient();
      await requireRedis(client);
    });
    afterAll(() => cleanUp(prefix, [client]));
    const options = { prefix, time: 'caller', commandTimeout: 5000 } as const;
    let count = 0;
    const key = (): StateKey => stateKey(`rl-parity-${++count}`, 'r');

    /** Both stores, driven in lock step on the same keys; every answer is compared. */
    function pair(label: string) {
      const memory = new InMemoryRateLimitStore();
      const redis = new RedisRateLimitStore(client, options);
      const log: string[] = [];
      const where = (): string => `${label}, after:\n  ${log.slice(-12).join('\n  ')}`;
      return {
        log,
        async take(k: StateKey, p: RateLimitParams, now: number, n: number): Promise<RateLimitResult> {
          log.push(`take(${k.id}, ${JSON.stringify(p)}, ${now}, ${n})`);
          const m = { ...memory.take(k, p, now, n) };
          const r = await redis.take(k, p, now, n);
          expectSame(r, m, where);
          return r;
        },
        async tokens(k: StateKey, p: RateLimitParams, now: number): Promise<number> {
          log.push(`tokens(${k.id}, ${JSON.stringify(p)}, ${now})`);
          const m = memory.tokens(k, p, now);
          const r = await redis.tokens(k, p, now);
          if (!close(r, m)) throw new Error(`${where()}: tokens redis ${r} ≠ memory ${m}`);
          return r;
        },
        async reset(k: StateKey): Promise<void> {
          log.push(`reset(${k.id})`);
          memory.reset(k);
          await redis.reset(k);
        },
      };
    }

    it('a full-again instant past the largest double: both stay empty for good (TwoSum must not give NaN)', async () => {
      const both = pair('overflow');
      const k = key();
      const p = { permits: 1, per: 1e308, burst: 2 };
      const admitted: boolean[] = [];
      for (let i = 0; i < 6; i++) admitted.push((await both.take(k, p, 0, 1)).ok);
      expect(admitted).toEqual([true, true, false, false, false, false]);
      expect(await both.tokens(k, p, 0)).toBe(0);
    });

    it('gives the same answers on seeded random sequences (retunes, resets, clock steps back, epoch ms)', async () => {
      let takes = 0;
      let denied = 0;
      for (let seed = 1; seed <= 40; seed++) {
        const random = seededRandom(seed);
        const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
        const b = pair(`seed ${seed}`);
        // Odd seeds start at a small clock value, even ones at epoch ms (where an ulp of the clock is 2⁻¹² ms).
        let now = seed % 2 === 1 ? 1000 : 1.7e12 + (seed % 4 === 0 ? 0 : random());
        const keys = [key(), key(), key()];
        const params = new Map<StateKey, RateLimitParams>(keys.map((k) => [k, pick(PLIST)]));
        /** The last denial's retryAfter, so the clock sometimes moves by exactly that (the tolerance's edge). */
        let lastWait = 0;
        for (let i = 0; i < 150; i++) {
          const k = pick(keys);
          let p = params.get(k)!;
          const msPerToken = p.per / p.permits;
          const time = random();
          if (time < 0.25) {
            // stay put: bursts at one instant
          } else if (time < 0.35)
            now += random() * 1e-6 * msPerToken; // a tiny fraction of a token
          else if (time < 0.45 && lastWait > 0 && Number.isFinite(lastWait)) now += lastWait;
          else if (time < 0.5)
            now -= random() * 5 * msPerToken; // the clock steps back
          else if (time < 0.55)
            now += Math.floor(random() * 3); // whole ms, often 0
          else now += random() * 2 * msPerToken;
          const op = random();
          if (op < 0.04) {
            p = pick(PLIST); // a retune: other permits/per/burst for this key
            params.set(k, p);
            b.log.push(`retune ${k.id}`);
          }
          if (op < 0.03) await b.reset(k);
          else if (op < 0.25) await b.tokens(k, p, now);
          else {
            // n > burst is refused with retryAfter = Infinity, whether by a whole token or a fraction of one
            const n = pick([1, 1, 1, 2, 0.5, p.burst, p.burst + 1, p.burst + 0.25]);
            const r = await b.take(k, p, now, n);
            takes++;
            if (!r.ok) {
              denied++;
              lastWait = r.retryAfter;
            }
          }
        }
      }
      // The sequences exercise both answers, not only one.
      expect(denied).toBeGreaterThan(takes / 10);
      expect(denied).toBeLessThan(takes * 0.9);
    });
  });
} else {
  describe('RedisRateLimitStore matches core’s in-memory store', () => reportRedisUnreachable());
}
