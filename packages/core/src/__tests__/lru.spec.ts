import { InMemoryCircuitBreakerStore } from '../stores/in-memory-circuit-breaker-store';
import { InMemoryRateLimitStore } from '../stores/in-memory-rate-limit-store';
import { BulkheadStrategy } from '../strategies/bulkhead-strategy';
import { RateLimitStrategy } from '../strategies/rate-limit-strategy';
import type { Resilience } from '../resilience';
import { KeyState } from '../executor/policy-runtime';
import { deferred, infraError, settle, setup } from './helpers';
import { breaker, policy } from './kit';

/** Per-policy key bound with eviction of idle keys only (SPEC §5; @nestjs/throttler #2665, resilience4j #2243, opossum PR #365). */

const limited = (maxKeysPerPolicy: number, extra: Parameters<typeof setup>[1] = {}) =>
  setup(
    [
      policy('p', [new RateLimitStrategy({ permits: 1, per: '1h' }), breaker({ minThroughput: 1 })]),
      policy('q', [new RateLimitStrategy({ permits: 1, per: '1h' })]),
    ],
    { maxKeysPerPolicy, ...extra },
  );

const routes = async (r: Resilience, p = 'p') => (await r.admin.inspect({ policy: p })).map((s) => s.route);
/** A route whose token was spent answers rate_limited; an evicted (fresh) one answers 'fresh'. */
const probe = (r: Resilience, route: string, p = 'p') =>
  r.run(() => 'fresh', { policy: p, route }).catch((e: { code: string }) => e.code);

describe('maxKeysPerPolicy', () => {
  it('evicts an idle key past the bound; its state (and the stores’ state) starts over', async () => {
    const { resilience } = limited(3);
    for (const r of ['a', 'b', 'c']) await resilience.run(() => r, { policy: 'p', route: r });
    expect(await routes(resilience)).toEqual(['a', 'b', 'c']);
    await resilience.run(() => 'd', { policy: 'p', route: 'd' });
    expect(await routes(resilience)).toHaveLength(3);
    expect(await routes(resilience)).not.toContain('a');
    expect(await probe(resilience, 'a')).toBe('fresh'); // a's spent token was forgotten with it
  });

  it('gives a recently used key a second chance (CLOCK)', async () => {
    const { resilience } = limited(3);
    for (const r of ['a', 'b', 'c', 'd']) await resilience.run(() => r, { policy: 'p', route: r }); // evicts a
    await probe(resilience, 'b'); // touch b
    await resilience.run(() => 'e', { policy: 'p', route: 'e' }); // c is the untouched one
    expect(await routes(resilience)).toEqual(['b', 'd', 'e']);
    expect(await probe(resilience, 'b')).toBe('rate_limited'); // b kept its state
  });

  it('is per policy', async () => {
    const { resilience } = limited(2);
    for (const r of ['a', 'b']) {
      await resilience.run(() => r, { policy: 'p', route: r });
      await resilience.run(() => r, { policy: 'q', route: r });
    }
    expect(await routes(resilience, 'p')).toEqual(['a', 'b']);
    expect(await routes(resilience, 'q')).toEqual(['a', 'b']);
  });

  it('never evicts a busy or a forced-open key, nor an open one during its break', async () => {
    const { resilience, clock } = limited(3);
    const d = deferred();
    const busy = settle(resilience.run(() => d.promise, { policy: 'p', route: 'busy' }));
    await resilience.run(() => Promise.reject(infraError()), { policy: 'p', route: 'open' }).catch(() => 0);
    await resilience.admin.forceOpen('p', 'forced');
    for (let i = 0; i < 50; i++) await resilience.run(() => i, { policy: 'p', route: `idle${i}` });
    const kept = await routes(resilience);
    expect(kept.slice(0, 3)).toEqual(['busy', 'open', 'forced']);
    expect(kept).toHaveLength(4); // the pinned three + one idle key at a time
    d.resolve('done');
    await clock.advance(0);
    expect(busy.value).toBe('done');
    const open = (await resilience.admin.inspect({ policy: 'p' })).find((x) => x.route === 'open');
    expect(open?.breaker?.state).toBe('open');
    await expect(resilience.run(() => 1, { policy: 'p', route: 'forced' })).rejects.toMatchObject({
      code: 'resilience_forced_open',
    });
  });

  it('an outage over many routes stays bounded: a tripped key is evictable once its break has ended', async () => {
    const { resilience, clock } = setup([policy('o', [breaker({ minThroughput: 1 })])], {
      maxKeysPerPolicy: 2,
    });
    for (let i = 0; i < 100; i++)
      await resilience
        .run(() => Promise.reject(infraError()), { policy: 'o', route: `r${i}` })
        .catch(() => 0);
    // During the break every tripped key is pinned: forgetting one would forget its open breaker.
    expect(await routes(resilience, 'o')).toHaveLength(100);
    expect(await probe(resilience, 'r0', 'o')).toBe('circuit_open');
    await clock.advance(4999);
    await resilience.run(() => 'early', { policy: 'o', route: 'early' });
    expect(await routes(resilience, 'o')).toHaveLength(101);
    await clock.advance(1); // breakDuration (5 s) since each was seen open
    await resilience.run(() => 'new', { policy: 'o', route: 'new' });
    expect((await routes(resilience, 'o')).length).toBeLessThanOrEqual(2);
    // A route whose key was evicted starts over with a closed breaker.
    expect(await probe(resilience, 'r5', 'o')).toBe('fresh');
  });

  it('memory stays bounded with 100k distinct routes: keys, breaker and rate-limit store entries', async () => {
    const breakers = new InMemoryCircuitBreakerStore();
    const buckets = new InMemoryRateLimitStore();
    const { resilience, clock } = limited(64, { stores: { circuitBreaker: breakers, rateLimit: buckets } });
    for (let i = 0; i < 100_000; i++) {
      await resilience.run(() => i, { policy: 'p', route: `user-${i}` });
    }
    expect((await routes(resilience)).length).toBeLessThanOrEqual(64);
    expect(breakers.size).toBeLessThanOrEqual(64);
    expect(buckets.size).toBeLessThanOrEqual(64);
    expect(clock.pendingTimers()).toBe(0); // no timer per key either
  });

  it('stays bounded while a route-less force-open covers every new route', async () => {
    const { resilience } = limited(16);
    await resilience.admin.forceOpen('p');
    for (let i = 0; i < 1000; i++) {
      await expect(resilience.run(() => i, { policy: 'p', route: `r${i}` })).rejects.toMatchObject({
        code: 'resilience_forced_open',
      });
    }
    // The keys held stay bounded; inspect adds the policy-wide entry a route-less force-open shows (it holds no key).
    const listed = await routes(resilience);
    expect(listed.filter((r) => r !== undefined).length).toBeLessThanOrEqual(16);
    expect(listed.filter((r) => r === undefined)).toHaveLength(1);
    expect((await resilience.admin.inspect({ policy: 'p' })).every((x) => x.forcedOpen)).toBe(true);
    await resilience.admin.clearForcedOpen('p');
    await expect(resilience.run(() => 'open again', { policy: 'p', route: 'r1' })).resolves.toBe(
      'open again',
    );
  });

  it('a bulkhead key holding queued waiters is busy and never evicted', async () => {
    const { resilience, clock } = setup(
      [policy('b', [new BulkheadStrategy({ maxConcurrency: 1, maxQueue: 5 })])],
      { maxKeysPerPolicy: 2 },
    );
    const d = deferred();
    settle(resilience.run(() => d.promise, { policy: 'b', route: 'hot' }));
    const waiter = settle(resilience.run(() => 'served', { policy: 'b', route: 'hot' }));
    for (let i = 0; i < 20; i++) await resilience.run(() => i, { policy: 'b', route: `cold${i}` });
    d.resolve(1);
    await clock.advance(0);
    expect(waiter.value).toBe('served');
    expect((await resilience.admin.inspect({ policy: 'b' }))[0]).toMatchObject({ route: 'hot', inUse: 0 });
  });

  it('a burst of busy keys costs linear work, not a full rescan per new key (quadratic before)', async () => {
    const { resilience, clock } = limited(100);
    const checks = jest.spyOn(KeyState.prototype, 'evictable');
    const gates = Array.from({ length: 5000 }, () => deferred());
    const runs = gates.map((g, i) =>
      settle(resilience.run(() => g.promise, { policy: 'q', route: `k${i}` })),
    );
    // every key is busy: one failed sweep (two passes over 100 keys) and then none until a key goes idle
    expect(checks.mock.calls.length).toBeLessThan(1000);
    gates.forEach((g) => g.resolve(1));
    await clock.advance(0);
    expect(runs.every((r) => r.value === 1)).toBe(true);
    await resilience.run(() => 'next', { policy: 'q', route: 'next' });
    expect((await routes(resilience, 'q')).length).toBeLessThanOrEqual(100); // back under the bound at once
    checks.mockRestore();
  });

  it('stays bounded while streams are refused and every other key is busy; a stream being admitted pins its key', async () => {
    const { resilience, clock } = setup([policy('p', [breaker()])], { maxKeysPerPolicy: 2 });
    const d = deferred();
    const busy = ['x', 'y'].map((route) => settle(resilience.run(() => d.promise, { policy: 'p', route })));
    await resilience.run(() => 1, { policy: 'p', route: 'warm' }); // a sweep finds x and y pinned
    await resilience.admin.forceOpen('p');
    for (let i = 0; i < 50; i++) {
      await expect(resilience.admitStream('p', { route: `s${i}` })).rejects.toMatchObject({
        code: 'resilience_forced_open',
      });
    }
    // x, y and the one idle key of the latest refusal (+ the policy-wide entry of the route-less force-open)
    expect((await routes(resilience)).filter((r) => r !== undefined)).toEqual(['x', 'y', 's49']);
    d.resolve(1);
    await clock.advance(0);
    expect(busy.map((b) => b.value)).toEqual([1, 1]);
  });

  it('does not evict a key while its stream waits for a remote breaker store', async () => {
    const local = new InMemoryCircuitBreakerStore();
    const gate = deferred();
    const slow = {
      acquire: async (...a: Parameters<InMemoryCircuitBreakerStore['acquire']>) => {
        await gate.promise;
        return local.acquire(...a);
      },
      record: (...a: Parameters<InMemoryCircuitBreakerStore['record']>) => local.record(...a),
      inspect: (...a: Parameters<InMemoryCircuitBreakerStore['inspect']>) => local.inspect(...a),
      reset: (...a: Parameters<InMemoryCircuitBreakerStore['reset']>) => local.reset(...a),
      evict: (...a: Parameters<InMemoryCircuitBreakerStore['evict']>) => local.evict(...a),
    };
    const { resilience } = setup([policy('p', [breaker({ minThroughput: 1 })])], {
      maxKeysPerPolicy: 1,
      stores: { circuitBreaker: slow },
    });
    const opening = resilience.admitStream('p', { route: 's' });
    const other = settle(resilience.run(() => 1, { policy: 'p', route: 'other' }));
    gate.resolve(undefined);
    const permit = await opening;
    await Promise.resolve();
    expect(other.value).toBe(1);
    expect(await routes(resilience)).toContain('s'); // pinned while admitting, then by the running stream
    permit.settle(new Error('stream failed'));
    await Promise.resolve();
    const s = (await resilience.admin.inspect({ policy: 'p' })).find((x) => x.route === 's');
    expect(s?.breaker?.state).toBe('open'); // its outcome reached the breaker the key still holds
  });
});
