import { BASE, admit, calls, params, toHalfOpen } from './circuit-breaker-conformance-kit';
import { describeBreakerTripDetails } from './circuit-breaker-trip-conformance';
import { describeGrowingBreaks } from './circuit-breaker-growing-break-conformance';
import { useBench, type ConformanceOptions, type StoreSetup } from './harness';
import type { CircuitBreakerStoreShape } from './store-shapes';

/**
 * The contract of a `CircuitBreakerStore` (SPEC §4, §10, §11.9), runnable against any implementation. Every rule
 * here guards a bug seen in other libraries (opossum #119, #385, #481; Polly #216, #217, #311, #717; @nestjs/throttler #1303).
 */
export function describeCircuitBreakerStoreConformance(
  name: string,
  setup: StoreSetup<CircuitBreakerStoreShape>,
  options: ConformanceOptions = {},
): void {
  const concurrency = options.concurrency ?? 1000;
  describe(`CircuitBreakerStore conformance: ${name}`, () => {
    if (options.timeout !== undefined) jest.setTimeout(options.timeout);
    const bench = useBench(setup, options);

    it('admits on a fresh key in the closed state without a lease or transition', async () => {
      const b = bench();
      const key = b.key();
      const a = await b.store.acquire(key, BASE, b.now());
      expect(a).toMatchObject({ admitted: true, state: 'closed', lease: undefined, transition: undefined });
      expect(await b.store.inspect(key, BASE, b.now())).toMatchObject({
        state: 'closed',
        calls: 0,
        failureRatio: 0,
      });
    });

    it('never trips below minThroughput, however many of the calls fail', async () => {
      const b = bench();
      const key = b.key();
      const r = await calls(b, key, BASE, BASE.minThroughput - 1, true);
      expect(r.state).toBe('closed');
      expect(await b.store.inspect(key, BASE, b.now())).toMatchObject({
        state: 'closed',
        calls: 9,
        failureRatio: 1,
      });
    });

    it('trips at exactly failures/calls = failureRatio once minThroughput is reached', async () => {
      const b = bench();
      const key = b.key();
      await calls(b, key, BASE, 5, false);
      expect((await calls(b, key, BASE, 4, true)).state).toBe('closed');
      const r = await calls(b, key, BASE, 1, true);
      const transition = { from: 'closed', to: 'open', failureRatio: 0.5, calls: 10 };
      expect(r).toEqual({ state: 'open', transition });
      const rejected = await b.store.acquire(key, BASE, b.now());
      expect(rejected).toMatchObject({ admitted: false, state: 'open', retryAfter: BASE.breakDuration });
    });

    it('stays closed just below the ratio', async () => {
      const b = bench();
      const key = b.key();
      await calls(b, key, BASE, 6, false);
      await calls(b, key, BASE, 4, true);
      const s = await b.store.inspect(key, BASE, b.now());
      expect(s).toMatchObject({ state: 'closed', calls: 10 });
      expect(s.failureRatio).toBeCloseTo(0.4, 12);
      expect((await b.store.acquire(key, BASE, b.now())).admitted).toBe(true);
    });

    it('keeps a sample until its bucket is ten buckets old (rolling window edge)', async () => {
      const b = bench();
      const p = params({ minThroughput: 5 });
      await b.alignTo(p.samplingWindow);
      const kept = b.key('kept');
      const dropped = b.key('dropped');
      await calls(b, kept, p, 4, true);
      await calls(b, dropped, p, 4, true);
      await b.advance(p.samplingWindow - 1); // last ms of the tenth bucket
      expect(await b.store.inspect(kept, p, b.now())).toMatchObject({ calls: 4 });
      expect(await calls(b, kept, p, 1, true)).toEqual({
        state: 'open',
        transition: { from: 'closed', to: 'open', failureRatio: 1, calls: 5 },
      });
      await b.advance(1); // first ms of the eleventh bucket: the first bucket rolls out
      expect(await b.store.inspect(dropped, p, b.now())).toMatchObject({ state: 'closed', calls: 0 });
      expect((await calls(b, dropped, p, 1, true)).state).toBe('closed');
      expect(await b.store.inspect(dropped, p, b.now())).toMatchObject({ calls: 1, failureRatio: 1 });
    });

    it('rolls one bucket at a time, not tumbling: each sample leaves exactly ten buckets after its own', async () => {
      const b = bench();
      const p = params({ minThroughput: 1000 }); // counts only: never trips
      const width = p.samplingWindow / 10;
      await b.alignTo(p.samplingWindow);
      const key = b.key();
      // one call in each bucket of the first window (the last one a failure)
      for (let i = 0; i < 10; i++) {
        if (i > 0) await b.advance(width);
        await calls(b, key, p, 1, i === 9);
        expect(await b.store.inspect(key, p, b.now())).toMatchObject({ calls: i + 1 });
      }
      // into the next window: one old bucket leaves per bucket width (a tumbling window would drop them all)
      for (let i = 1; i <= 9; i++) {
        await b.advance(width);
        expect(await b.store.inspect(key, p, b.now())).toMatchObject({ calls: 10 - i });
      }
      // recording rolls the same way as reading: the last old call (a failure) is kept beside the new one
      await calls(b, key, p, 1, false);
      expect(await b.store.inspect(key, p, b.now())).toMatchObject({ calls: 2, failureRatio: 0.5 });
      await b.advance(width);
      expect(await b.store.inspect(key, p, b.now())).toMatchObject({ calls: 1, failureRatio: 0 });
    });

    it('rejects while open with a shrinking retryAfter, then half-opens lazily on the next acquire', async () => {
      const b = bench();
      const key = b.key();
      await calls(b, key, BASE, BASE.minThroughput, true);
      await b.advance(BASE.breakDuration - 1);
      expect(await b.store.acquire(key, BASE, b.now())).toMatchObject({
        admitted: false,
        state: 'open',
        retryAfter: 1,
      });
      expect((await b.store.inspect(key, BASE, b.now())).state).toBe('open');
      await b.advance(1);
      // Once the break is over, inspect reads half-open (what the next call will find) without moving any state.
      const seen = await b.store.inspect(key, BASE, b.now());
      expect(seen).toMatchObject({ state: 'half_open', calls: BASE.minThroughput });
      expect(seen.generation).toBe((await b.store.inspect(key, BASE, b.now())).generation);
      const probe = await b.store.acquire(key, BASE, b.now());
      expect(probe).toMatchObject({
        admitted: true,
        state: 'half_open',
        transition: { from: 'open', to: 'half_open' },
      });
      expect(probe.admitted && typeof probe.lease === 'string').toBe(true);
      const next = await b.store.acquire(key, BASE, b.now());
      expect(next).toMatchObject({ admitted: false, state: 'half_open', transition: undefined });
      expect(!next.admitted && next.retryAfter > 0 && next.retryAfter <= BASE.breakDuration).toBe(true);
    });

    it(`grants exactly halfOpenMaxCalls probes to ${concurrency} concurrent acquires`, async () => {
      const b = bench();
      const key = b.key();
      const p = params({ halfOpenMaxCalls: 3 });
      await calls(b, key, p, p.minThroughput, true);
      await b.advance(p.breakDuration);
      const now = b.now();
      const all = await Promise.all(
        Array.from({ length: concurrency }, async () => ({ ...(await b.store.acquire(key, p, now)) })),
      );
      const admitted = all.filter((a) => a.admitted);
      expect(admitted).toHaveLength(3);
      expect(new Set(admitted.map((a) => a.admitted && a.lease)).size).toBe(3);
      expect(all.filter((a) => a.transition !== undefined)).toHaveLength(1);
      expect(all.every((a) => a.state === 'half_open')).toBe(true);
      expect(all.every((a) => a.admitted || (a.retryAfter > 0 && a.retryAfter <= p.breakDuration))).toBe(
        true,
      );
    });

    it('closes only after all halfOpenMaxCalls probes succeed, with a fresh window', async () => {
      const b = bench();
      const key = b.key();
      const p = params({ halfOpenMaxCalls: 3 });
      const first = await toHalfOpen(b, key, p);
      const probes = [first, await admit(b, key, p), await admit(b, key, p)];
      expect((await b.store.acquire(key, p, b.now())).admitted).toBe(false);
      for (const probe of probes.slice(0, 2)) {
        expect(await b.store.record(key, p, probe, 'success', b.now())).toEqual({
          state: 'half_open',
          transition: undefined,
        });
      }
      expect((await b.store.acquire(key, p, b.now())).admitted).toBe(false);
      expect(await b.store.record(key, p, probes[2]!, 'success', b.now())).toEqual({
        state: 'closed',
        transition: { from: 'half_open', to: 'closed' },
      });
      expect(await b.store.inspect(key, p, b.now())).toMatchObject({ state: 'closed', calls: 0 });
      expect(await b.store.acquire(key, p, b.now())).toMatchObject({ admitted: true, state: 'closed' });
    });

    it('closes with a fresh window even when the break is shorter than the window (no old failure counts)', async () => {
      const b = bench();
      const key = b.key();
      const p = params({ samplingWindow: 60_000, breakDuration: 1000 });
      const probe = await toHalfOpen(b, key, p);
      expect((await b.store.record(key, p, probe, 'success', b.now())).state).toBe('closed');
      expect(await b.store.inspect(key, p, b.now())).toMatchObject({
        state: 'closed',
        calls: 0,
        failureRatio: 0,
      });
      const r = await calls(b, key, p, p.minThroughput - 1, true);
      expect(r.state).toBe('closed');
    });

    it('re-opens on one failed probe and ignores the other probes afterwards', async () => {
      const b = bench();
      const key = b.key();
      const p = params({ halfOpenMaxCalls: 2 });
      const first = await toHalfOpen(b, key, p);
      const second = await admit(b, key, p);
      expect(await b.store.record(key, p, first, 'failure', b.now())).toEqual({
        state: 'open',
        transition: { from: 'half_open', to: 'open', failureRatio: 1, calls: 1 },
      });
      expect(await b.store.record(key, p, second, 'success', b.now())).toEqual({
        state: 'open',
        transition: undefined,
      });
      expect(await b.store.acquire(key, p, b.now())).toMatchObject({
        admitted: false,
        retryAfter: p.breakDuration,
      });
    });

    it('re-buckets the window for another samplingWindow (a retune, replicas mid-deploy): outcomes keep their times', async () => {
      const b = bench();
      const key = b.key();
      const p = params({ minThroughput: 100 });
      await b.alignTo(p.samplingWindow);
      await calls(b, key, p, 3, true);
      await b.advance(500);
      await calls(b, key, p, 2, false);
      await b.advance(300); // the failures are 800 ms old, the successes 300 ms
      expect(await b.store.inspect(key, { ...p, samplingWindow: 500 }, b.now())).toMatchObject({
        calls: 2,
        failureRatio: 0,
      });
      expect(await b.store.inspect(key, { ...p, samplingWindow: 2000 }, b.now())).toMatchObject({
        calls: 5,
        failureRatio: 0.6,
      });
      // recording under the other window keeps what it re-bucketed, and trips on it
      const tripping = params({ samplingWindow: 2000, minThroughput: 6 });
      expect(await calls(b, key, tripping, 1, true)).toEqual({
        state: 'open',
        transition: { from: 'closed', to: 'open', failureRatio: 4 / 6, calls: 6 },
      });
    });

    // A wall clock (Redis TIME) can step back (NTP, a failover to a primary whose clock lags): cockatiel, opossum and @nestjs/throttler read the wall clock.
    it('starts the window over when the clock steps back a whole window, so it can still trip', async () => {
      const b = bench();
      const key = b.key();
      await calls(b, key, BASE, 20, false);
      const earlier = b.now() - 60_000;
      let last: { state: string } = { state: 'closed' };
      for (let i = 0; i < BASE.minThroughput; i++) {
        const a = await b.store.acquire(key, BASE, earlier);
        if (!a.admitted) throw new Error('rejected while closed');
        last = {
          ...(await b.store.record(
            key,
            BASE,
            { generation: a.generation, lease: a.lease },
            'failure',
            earlier,
          )),
        };
      }
      expect(last.state).toBe('open');
    });

    it('keeps a breaker open no longer than breakDuration after the clock steps back', async () => {
      const b = bench();
      const key = b.key();
      await calls(b, key, BASE, BASE.minThroughput, true);
      const earlier = b.now() - 3_600_000;
      const rejected = { ...(await b.store.acquire(key, BASE, earlier)) };
      expect(rejected).toMatchObject({ admitted: false, state: 'open' });
      expect(!rejected.admitted && rejected.retryAfter).toBeLessThanOrEqual(BASE.breakDuration);
      const probe = await b.store.acquire(key, BASE, earlier + BASE.breakDuration);
      expect(probe).toMatchObject({ admitted: true, state: 'half_open' });
    });

    it('reclaims a probe lease within breakDuration after the clock steps back', async () => {
      const b = bench();
      const key = b.key();
      await toHalfOpen(b, key, BASE); // the one probe holds its lease, never reporting
      const earlier = b.now() - 3_600_000;
      const busy = { ...(await b.store.acquire(key, BASE, earlier)) };
      expect(busy).toMatchObject({ admitted: false, state: 'half_open' });
      expect(!busy.admitted && busy.retryAfter).toBeLessThanOrEqual(BASE.breakDuration);
      const next = await b.store.acquire(key, BASE, earlier + BASE.breakDuration);
      expect(next).toMatchObject({ admitted: true, state: 'half_open' });
    });

    it('takes a released probe lease back without moving the state', async () => {
      const b = bench();
      const key = b.key();
      const probe = await toHalfOpen(b, key, BASE);
      expect((await b.store.acquire(key, BASE, b.now())).admitted).toBe(false);
      expect(await b.store.record(key, BASE, probe, 'release', b.now())).toEqual({
        state: 'half_open',
        transition: undefined,
      });
      const again = await admit(b, key, BASE);
      expect(again.lease).toBeDefined();
      expect((await b.store.record(key, BASE, again, 'success', b.now())).state).toBe('closed');
    });

    it('reclaims a probe lease that never reports after breakDuration, so half-open never wedges', async () => {
      const b = bench();
      const key = b.key();
      const lost = await toHalfOpen(b, key, BASE);
      await b.advance(BASE.breakDuration - 1);
      expect(await b.store.acquire(key, BASE, b.now())).toMatchObject({ admitted: false, retryAfter: 1 });
      await b.advance(1);
      const replacement = await admit(b, key, BASE);
      expect(replacement.lease).not.toBe(lost.lease);
      expect(await b.store.record(key, BASE, lost, 'success', b.now())).toEqual({
        state: 'half_open',
        transition: undefined,
      });
      expect((await b.store.record(key, BASE, replacement, 'success', b.now())).state).toBe('closed');
    });

    it('ignores outcomes of calls admitted before the latest state change', async () => {
      const b = bench();
      const key = b.key();
      const early = await admit(b, key, BASE);
      const probe = await toHalfOpen(b, key, BASE);
      expect(probe.generation).toBeGreaterThan(early.generation);
      expect(await b.store.record(key, BASE, early, 'failure', b.now())).toEqual({
        state: 'half_open',
        transition: undefined,
      });
      expect((await b.store.record(key, BASE, probe, 'success', b.now())).state).toBe('closed');
      const closedGeneration = (await b.store.inspect(key, BASE, b.now())).generation;
      expect(closedGeneration).toBeGreaterThan(probe.generation);
      await b.store.record(key, BASE, early, 'failure', b.now());
      expect(await b.store.inspect(key, BASE, b.now())).toMatchObject({
        calls: 0,
        generation: closedGeneration,
      });
    });

    it('increments the generation on every state change', async () => {
      const b = bench();
      const key = b.key();
      const g0 = (await admit(b, key, BASE)).generation;
      await calls(b, key, BASE, BASE.minThroughput, true);
      const g1 = (await b.store.inspect(key, BASE, b.now())).generation;
      await b.advance(BASE.breakDuration);
      const g2 = (await admit(b, key, BASE)).generation;
      expect([g1 - g0, g2 - g1]).toEqual([1, 1]);
    });

    it('reset closes an open breaker with an empty window and a new generation', async () => {
      const b = bench();
      const key = b.key();
      const stale = await admit(b, key, BASE);
      await calls(b, key, BASE, BASE.minThroughput, true);
      const before = await b.store.inspect(key, BASE, b.now());
      expect(before.state).toBe('open');
      const generation = before.generation;
      await b.store.reset(key, b.now());
      const after = await b.store.inspect(key, BASE, b.now());
      expect(after).toMatchObject({ state: 'closed', calls: 0, failureRatio: 0 });
      expect(after.generation).toBeGreaterThan(generation);
      await b.store.record(key, BASE, stale, 'failure', b.now());
      expect((await b.store.inspect(key, BASE, b.now())).calls).toBe(0);
      expect(await b.store.acquire(key, BASE, b.now())).toMatchObject({ admitted: true, state: 'closed' });
    });

    it('keeps keys independent (policy, route)', async () => {
      const b = bench();
      const a = b.key('a/b');
      const sibling = { ...b.key(undefined) };
      const samePolicy = [b.keyOf(a.policy, 'a'), b.keyOf(a.policy, undefined)];
      const sameRoute = b.key('a/b');
      await calls(b, a, BASE, BASE.minThroughput, true);
      expect((await b.store.acquire(a, BASE, b.now())).admitted).toBe(false);
      expect((await b.store.acquire(sibling, BASE, b.now())).admitted).toBe(true);
      for (const other of [...samePolicy, sameRoute]) {
        expect(await b.store.acquire(other, BASE, b.now())).toMatchObject({
          admitted: true,
          state: 'closed',
        });
      }
    });

    it('does not move the state on release outcomes in the closed state', async () => {
      const b = bench();
      const key = b.key();
      for (let i = 0; i < 20; i++) {
        const permit = await admit(b, key, BASE);
        await b.store.record(key, BASE, permit, 'release', b.now());
      }
      expect(await b.store.inspect(key, BASE, b.now())).toMatchObject({ state: 'closed', calls: 0 });
    });

    describeBreakerTripDetails(bench);
    describeGrowingBreaks(bench);
  });
}
