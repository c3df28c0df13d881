import { seededRandom } from '../seeded-random';
import { useBench, type ConformanceOptions, type StoreSetup } from './harness';
import type { RateLimitParamsShape, RateLimitStoreShape } from './store-shapes';

const P: RateLimitParamsShape = Object.freeze({ permits: 10, per: 1000, burst: 10 });
/** Float tolerance: stores may hold tokens as fractions (GCRA or continuous refill). */
const EPS = 1e-6;

/**
 * The contract of a `RateLimitStore` (SPEC §3 token bucket, §11.10), runnable against any implementation: starts full,
 * refills continuously at `permits/per` up to `burst`, takes atomically, and reports a correct `retryAfter` (> 0).
 * The stampede and span tests guard against non-atomic remote limiters (@nestjs/throttler #1303: a Redis limit of 5 let ~400 of 1,000 requests through).
 */
export function describeRateLimitStoreConformance(
  name: string,
  setup: StoreSetup<RateLimitStoreShape>,
  options: ConformanceOptions = {},
): void {
  const concurrency = options.concurrency ?? 1000;
  describe(`RateLimitStore conformance: ${name}`, () => {
    if (options.timeout !== undefined) jest.setTimeout(options.timeout);
    const bench = useBench(setup, options);

    it('starts full and takes one token at a time', async () => {
      const b = bench();
      const key = b.key();
      expect(await b.store.tokens(key, P, b.now())).toBeCloseTo(10, 9);
      const r = await b.store.take(key, P, b.now());
      expect(r.ok).toBe(true);
      expect(r.tokens).toBeCloseTo(9, 9);
    });

    it('never holds more than burst, however long it idles', async () => {
      const b = bench();
      const key = b.key();
      const p = { permits: 10, per: 1000, burst: 4 };
      await b.store.take(key, p, b.now());
      await b.advance(60_000);
      expect(await b.store.tokens(key, p, b.now())).toBeCloseTo(4, 9);
      for (let i = 0; i < 4; i++) expect((await b.store.take(key, p, b.now())).ok).toBe(true);
      expect((await b.store.take(key, p, b.now())).ok).toBe(false);
    });

    it('rejects with retryAfter > 0 equal to the time until a token refills', async () => {
      const b = bench();
      const key = b.key();
      for (let i = 0; i < 10; i++) expect((await b.store.take(key, P, b.now())).ok).toBe(true);
      const denied = { ...(await b.store.take(key, P, b.now())) };
      expect(denied.ok).toBe(false);
      expect(denied.tokens).toBeCloseTo(0, 9);
      expect(!denied.ok && Math.abs(denied.retryAfter - 100) < EPS).toBe(true);
      await b.advance(40);
      const later = await b.store.take(key, P, b.now());
      expect(!later.ok && later.retryAfter > 0 && Math.abs(later.retryAfter - 60) < EPS).toBe(true);
      await b.advance(60);
      expect((await b.store.take(key, P, b.now())).ok).toBe(true);
    });

    it('admits a take made exactly retryAfter after a denial, whatever the rate (no float shortfall)', async () => {
      const b = bench();
      for (const p of [
        { permits: 3, per: 1000, burst: 3 },
        { permits: 3, per: 10, burst: 2 },
        { permits: 7, per: 1000, burst: 7 },
      ]) {
        const key = b.key();
        for (let i = 0; i < p.burst; i++) expect((await b.store.take(key, p, b.now())).ok).toBe(true);
        for (let round = 0; round < 12; round++) {
          const denied = { ...(await b.store.take(key, p, b.now())) };
          expect(denied.ok).toBe(false);
          const wait = denied.ok ? 0 : denied.retryAfter;
          // A wait a clock can represent: at least a millionth of the token interval.
          expect(wait).toBeGreaterThan((p.per / p.permits) * 1e-6);
          await b.advance(wait);
          expect((await b.store.take(key, p, b.now())).ok).toBe(true);
        }
      }
    });

    it('still limits a fast bucket at epoch-ms clock values (the rounding allowance stays under a token)', async () => {
      const b = bench();
      await b.advance(1.7e12 - b.now());
      const key = b.key();
      const p = { permits: 1024, per: 1, burst: 1024 }; // ~1M/s
      const now = b.now();
      for (let i = 0; i < 1024; i++) expect((await b.store.take(key, p, now)).ok).toBe(true);
      const denied = await b.store.take(key, p, now);
      expect(denied.ok).toBe(false);
      // Exactly one token's time later, one more goes.
      await b.advance(denied.ok ? 0 : denied.retryAfter);
      expect((await b.store.take(key, p, b.now())).ok).toBe(true);
    });

    it('never grants more than burst in one take, at any clock value (the rounding allowance included)', async () => {
      const b = bench();
      const p = { permits: 1024, per: 1, burst: 4 }; // a fast bucket: at epoch ms its allowance is half a token
      for (const start of [b.now(), 1.7e12]) {
        if (start > b.now()) await b.advance(start - b.now());
        const key = b.key();
        const refused = { ...(await b.store.take(key, p, b.now(), 4.25)) };
        expect(refused.ok).toBe(false);
        expect(refused.ok ? 0 : refused.retryAfter).toBe(Infinity);
        expect((await b.store.take(key, p, b.now(), 4)).ok).toBe(true); // the full bucket is all there
      }
    });

    it('refills continuously and fractionally', async () => {
      const b = bench();
      const key = b.key();
      for (let i = 0; i < 10; i++) await b.store.take(key, P, b.now());
      await b.advance(250);
      expect(await b.store.tokens(key, P, b.now())).toBeCloseTo(2.5, 6);
      await b.advance(750);
      expect(await b.store.tokens(key, P, b.now())).toBeCloseTo(10, 6);
    });

    it('takes n tokens at once or none, and a denied take consumes nothing', async () => {
      const b = bench();
      const key = b.key();
      expect((await b.store.take(key, P, b.now(), 8)).ok).toBe(true);
      const denied = { ...(await b.store.take(key, P, b.now(), 3)) };
      expect(!denied.ok && Math.abs(denied.retryAfter - 100) < EPS).toBe(true);
      expect(await b.store.tokens(key, P, b.now())).toBeCloseTo(2, 9);
      expect((await b.store.take(key, P, b.now(), 2)).ok).toBe(true);
    });

    it('never refills from a clock that steps back (cockatiel, opossum and @nestjs/throttler read the wall clock)', async () => {
      const b = bench();
      const key = b.key();
      for (let i = 0; i < 10; i++) await b.store.take(key, P, b.now());
      const earlier = b.now() - 5000;
      expect((await b.store.take(key, P, earlier)).ok).toBe(false);
      expect(await b.store.tokens(key, P, earlier)).toBeCloseTo(0, 9);
      await b.advance(100);
      expect((await b.store.take(key, P, b.now())).ok).toBe(true);
      // one token's time later holds one token, not what a refill from the earlier time would give
      expect(await b.store.tokens(key, P, b.now())).toBeCloseTo(0, 9);
      expect((await b.store.take(key, P, b.now())).ok).toBe(false);
    });

    // Like @ballast/token-bucket, every call (a read, a denied take) moves the bucket's latest time seen forward,
    // and an earlier `now` is treated as that latest time: tokens seen are never taken back by a step back.
    it('treats a step back after a read as the latest time seen: the token it reported can be taken', async () => {
      const b = bench();
      const key = b.key();
      const start = b.now();
      for (let i = 0; i < 10; i++) await b.store.take(key, P, start);
      await b.advance(100);
      expect(await b.store.tokens(key, P, b.now())).toBeCloseTo(1, 9);
      const earlier = start + 50;
      const r = { ...(await b.store.take(key, P, earlier)) };
      expect(r.ok).toBe(true);
      expect(r.tokens).toBeCloseTo(0, 9);
      expect(await b.store.tokens(key, P, earlier)).toBeCloseTo(0, 9);
      const denied = { ...(await b.store.take(key, P, earlier)) };
      expect(denied.ok).toBe(false);
      expect(!denied.ok && Math.abs(denied.retryAfter - 100) < EPS).toBe(true);
    });

    it('measures retryAfter from the latest time seen, a denied take included, after a step back', async () => {
      const b = bench();
      const key = b.key();
      const start = b.now();
      for (let i = 0; i < 10; i++) await b.store.take(key, P, start);
      await b.advance(40);
      const first = { ...(await b.store.take(key, P, b.now())) };
      expect(!first.ok && Math.abs(first.retryAfter - 60) < EPS).toBe(true);
      const back = { ...(await b.store.take(key, P, start + 10)) };
      expect(back.ok).toBe(false);
      expect(back.tokens).toBeCloseTo(0.4, 9);
      expect(!back.ok && Math.abs(back.retryAfter - 60) < EPS).toBe(true);
      expect((await b.store.take(key, P, start + 99)).ok).toBe(false);
      expect((await b.store.take(key, P, start + 100)).ok).toBe(true);
    });

    it('counts the time of a denied take of more than burst on a fresh key as seen', async () => {
      const b = bench();
      const key = b.key();
      const start = b.now();
      await b.advance(100);
      const tooMany = { ...(await b.store.take(key, P, b.now(), 11)) };
      expect(tooMany.ok).toBe(false);
      expect(tooMany.tokens).toBeCloseTo(10, 9);
      expect(!tooMany.ok && tooMany.retryAfter).toBe(Infinity);
      expect((await b.store.take(key, P, start)).ok).toBe(true);
      expect(await b.store.tokens(key, P, start + 50)).toBeCloseTo(9, 9);
      expect(await b.store.tokens(key, P, start + 150)).toBeCloseTo(9.5, 9);
    });

    it('keeps the latest time seen (and the tokens held) through a retune at a stepped-back time', async () => {
      const b = bench();
      const key = b.key();
      const start = b.now();
      for (let i = 0; i < 10; i++) await b.store.take(key, P, start);
      await b.advance(500);
      expect(await b.store.tokens(key, P, b.now())).toBeCloseTo(5, 9);
      const faster = { permits: 20, per: 1000, burst: 20 };
      expect(await b.store.tokens(key, faster, start + 100)).toBeCloseTo(5, 9);
      expect(await b.store.tokens(key, faster, start + 400)).toBeCloseTo(5, 9);
      const r = { ...(await b.store.take(key, faster, start + 300, 5)) };
      expect(r.ok).toBe(true);
      expect(r.tokens).toBeCloseTo(0, 9);
      const denied = { ...(await b.store.take(key, faster, start + 450)) };
      expect(!denied.ok && Math.abs(denied.retryAfter - 50) < EPS).toBe(true);
      await b.advance(50);
      expect(await b.store.tokens(key, faster, b.now())).toBeCloseTo(1, 9);
    });

    it('reset refills the bucket', async () => {
      const b = bench();
      const key = b.key();
      for (let i = 0; i < 10; i++) await b.store.take(key, P, b.now());
      await b.store.reset(key);
      expect(await b.store.tokens(key, P, b.now())).toBeCloseTo(10, 9);
      expect((await b.store.take(key, P, b.now())).ok).toBe(true);
    });

    it('keeps keys independent', async () => {
      const b = bench();
      const a = b.key('a');
      const c = b.key('c');
      for (let i = 0; i < 10; i++) await b.store.take(a, P, b.now());
      expect((await b.store.take(a, P, b.now())).ok).toBe(false);
      expect((await b.store.take(c, P, b.now())).ok).toBe(true);
      for (const other of [b.keyOf(a.policy, 'c'), b.keyOf(a.policy, undefined), b.key('a')]) {
        expect(await b.store.tokens(other, P, b.now())).toBeCloseTo(10, 9);
        expect((await b.store.take(other, P, b.now())).ok).toBe(true);
      }
    });

    it(`admits exactly burst of ${concurrency} concurrent takes at one instant`, async () => {
      const b = bench();
      const key = b.key();
      const p = { permits: 5, per: 1000, burst: 25 };
      const now = b.now();
      const results = await Promise.all(
        Array.from({ length: concurrency }, async () => (await b.store.take(key, p, now)).ok),
      );
      expect(results.filter(Boolean)).toHaveLength(25);
    });

    it('never admits more than permits/per · span + burst over any span', async () => {
      const b = bench();
      const key = b.key();
      const p = { permits: 20, per: 1000, burst: 5 };
      const random = seededRandom(42);
      const start = b.now();
      const admittedAt: number[] = [];
      for (let i = 0; i < 400; i++) {
        await b.advance(Math.floor(random() * 40));
        if ((await b.store.take(key, p, b.now())).ok) admittedAt.push(b.now());
      }
      const span = b.now() - start;
      expect(admittedAt.length).toBeLessThanOrEqual((p.permits / p.per) * span + p.burst + EPS);
      expect(admittedAt.length).toBeGreaterThan(0.9 * (p.permits / p.per) * span);
      for (let i = 0; i < admittedAt.length; i += 7) {
        for (let j = i; j < admittedAt.length; j += 5) {
          const within = j - i + 1;
          expect(within).toBeLessThanOrEqual(
            (p.permits / p.per) * (admittedAt[j]! - admittedAt[i]!) + p.burst + EPS,
          );
        }
      }
    });
  });
}
