import { withDeadline } from '../context/deadline';
import { InMemoryCircuitBreakerStore } from '../stores/in-memory-circuit-breaker-store';
import { InMemoryRateLimitStore } from '../stores/in-memory-rate-limit-store';
import type { CircuitBreakerStore, RateLimitStore } from '../stores/ports';
import { AdaptiveBulkheadStrategy } from '../strategies/adaptive-bulkhead-strategy';
import { RateLimitStrategy } from '../strategies/rate-limit-strategy';
import type { Strategy } from '../strategies/strategy';
import { deferred, infraError, settle, setup } from './helpers';
import { breaker, policy, trackedController } from './kit';

/** Store failures and `failOpenOnStoreError` (SPEC §5, §7; litellm PR #34300, next-shared-cache #771). */

type Mode = 'ok' | 'throw' | 'reject' | 'hang';

/** Wraps every method of a store: answer normally (as a promise, like a remote store), throw, reject or hang. */
function faulty<S extends object>(inner: S, initial: Mode = 'ok') {
  const control = { mode: initial, calls: 0, error: new Error('store down') };
  const store = new Proxy(inner, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== 'function' || prop === 'evict') return v;
      return (...args: unknown[]) => {
        control.calls++;
        switch (control.mode) {
          case 'throw':
            throw control.error;
          case 'reject':
            return Promise.reject(control.error);
          case 'hang':
            return new Promise(() => {});
          default:
            return Promise.resolve((v as (...a: unknown[]) => unknown).apply(target, args));
        }
      };
    },
  });
  return { store, control };
}

function withBreakerStore(
  mode: Mode,
  failOpen: boolean,
  strategies: readonly Strategy[] = [breaker({ minThroughput: 2 })],
) {
  const f = faulty<CircuitBreakerStore>(new InMemoryCircuitBreakerStore(), mode);
  const t = setup([policy('p', strategies, { failOpenOnStoreError: failOpen })], {
    stores: { circuitBreaker: f.store },
  });
  return { ...t, control: f.control };
}

function withRateStore(mode: Mode, failOpen: boolean) {
  const f = faulty<RateLimitStore>(new InMemoryRateLimitStore(), mode);
  const t = setup(
    [policy('p', [new RateLimitStrategy({ permits: 2, per: '1h' })], { failOpenOnStoreError: failOpen })],
    {
      stores: { rateLimit: f.store },
    },
  );
  return { ...t, control: f.control };
}

describe('store failover', () => {
  it.each(['throw', 'reject'] as const)(
    'breaker store that %ss, failOpenOnStoreError = true: admitted on local state, store_degraded emitted',
    async (mode) => {
      const { resilience, ofType, control } = withBreakerStore(mode, true);
      await expect(resilience.run(() => 'served', { policy: 'p', route: 'r' })).resolves.toBe('served');
      expect(ofType('store_degraded')).toEqual([
        { type: 'store_degraded', policy: 'p', route: 'r', store: 'circuitBreaker', error: control.error },
      ]);
      // the local breaker still protects: 1 failure in 2 calls trips it
      await resilience.run(() => Promise.reject(infraError()), { policy: 'p', route: 'r' }).catch(() => 0);
      await expect(resilience.run(() => 1, { policy: 'p', route: 'r' })).rejects.toMatchObject({
        code: 'circuit_open',
      });
      expect(ofType('call').map((e) => e.outcome)).toEqual(['success', 'failure', 'rejected']);
    },
  );

  it.each(['throw', 'reject'] as const)(
    'breaker store that %ss, failOpenOnStoreError = false: resilience_store_unavailable, fn never runs',
    async (mode) => {
      const { resilience, ofType, control } = withBreakerStore(mode, false);
      let ran = false;
      const err = await resilience.run(() => (ran = true), { policy: 'p' }).catch((e: unknown) => e);
      expect(ran).toBe(false);
      expect(err).toMatchObject({
        kind: 'infrastructure',
        code: 'resilience_store_unavailable',
        cause: control.error,
      });
      expect(ofType('store_degraded')).toHaveLength(1);
      expect(ofType('rejected').map((e) => e.code)).toEqual(['resilience_store_unavailable']);
      expect(ofType('call').map((e) => e.outcome)).toEqual(['rejected']);
    },
  );

  it.each([true, false])('rate-limit store that throws (failOpen = %s)', async (failOpen) => {
    const { resilience, ofType } = withRateStore('throw', failOpen);
    const results = [];
    for (let i = 0; i < 3; i++) {
      results.push(await resilience.run(() => 'ok', { policy: 'p' }).catch((e: { code: string }) => e.code));
    }
    expect(results).toEqual(
      failOpen
        ? ['ok', 'ok', 'rate_limited'] // the local bucket still limits
        : Array(3).fill('resilience_store_unavailable'),
    );
    expect(ofType('store_degraded').map((e) => e.store)).toEqual(Array(3).fill('rateLimit'));
  });

  it('a healthy asynchronous store works like the local one and recovers after an outage', async () => {
    const { resilience, ofType, control } = withBreakerStore('ok', true);
    await resilience.run(() => Promise.reject(infraError()), { policy: 'p' }).catch(() => 0);
    await resilience.run(() => Promise.reject(infraError()), { policy: 'p' }).catch(() => 0);
    await expect(resilience.run(() => 1, { policy: 'p' })).rejects.toMatchObject({ code: 'circuit_open' });
    expect(ofType('breaker_state').map((e) => e.to)).toEqual(['open']);
    control.mode = 'throw';
    await expect(resilience.run(() => 'local', { policy: 'p' })).resolves.toBe('local');
    control.mode = 'ok';
    await expect(resilience.run(() => 1, { policy: 'p' })).rejects.toMatchObject({ code: 'circuit_open' });
  });

  it('a store failing on record only: the call result stands, store_degraded is emitted, nothing unhandled', async () => {
    const f = faulty<CircuitBreakerStore>(new InMemoryCircuitBreakerStore());
    const inner = f.store;
    const store: CircuitBreakerStore = {
      acquire: (...a) => inner.acquire(...a),
      record: () => Promise.reject(new Error('record failed')),
      inspect: (...a) => inner.inspect(...a),
      reset: (...a) => inner.reset(...a),
    };
    const { resilience, clock, ofType } = setup([policy('p', [breaker()])], {
      stores: { circuitBreaker: store },
    });
    await expect(resilience.run(() => 'value', { policy: 'p' })).resolves.toBe('value');
    await clock.advance(0);
    expect(ofType('store_degraded').map((e) => (e.error as Error).message)).toEqual(['record failed']);
  });

  it('admin.inspect falls back to the local state when the store throws, and says so (localFallback)', async () => {
    const { resilience, control, ofType } = withBreakerStore('ok', true);
    await resilience.run(() => 1, { policy: 'p', route: 'r' });
    expect((await resilience.admin.inspect({ policy: 'p' }))[0]?.localFallback).toBeUndefined();
    control.mode = 'throw';
    await expect(resilience.admin.inspect({ policy: 'p' })).resolves.toEqual([
      {
        policy: 'p',
        route: 'r',
        forcedOpen: false,
        version: 0,
        mode: 'enforce',
        breaker: { state: 'closed', failureRatio: 0, calls: 0 },
        localFallback: ['circuitBreaker'],
      },
    ]);
    expect(ofType('store_degraded')).toEqual([]); // an inspection is not a call that survived a store error
  });

  it('admin.inspect falls back for a rate-limit store too (rejecting)', async () => {
    const { resilience, control } = withRateStore('ok', true);
    await resilience.run(() => 1, { policy: 'p' });
    control.mode = 'reject';
    const [snap] = await resilience.admin.inspect({ policy: 'p' });
    expect(snap?.rateLimitTokens).toBe(2); // the local bucket: the call above was counted by the store, not here
    expect(snap?.localFallback).toEqual(['rateLimit']);
  });

  it('admin.inspect asks the stores for every key at once: slow stores cost one round trip, not one per key', async () => {
    const inner = new InMemoryCircuitBreakerStore();
    let sleep: (ms: number) => Promise<void> = () => Promise.resolve();
    const slow: CircuitBreakerStore = {
      acquire: (...a) => inner.acquire(...a),
      record: (...a) => inner.record(...a),
      inspect: async (...a) => {
        await sleep(100);
        return inner.inspect(...a);
      },
      reset: (...a) => inner.reset(...a),
    };
    const bucket = new InMemoryRateLimitStore();
    const slowBucket: RateLimitStore = {
      take: (...a) => bucket.take(...a),
      tokens: async (...a) => {
        await sleep(100);
        return bucket.tokens(...a);
      },
      reset: (...a) => bucket.reset(...a),
    };
    const { resilience, clock } = setup(
      [policy('p', [breaker(), new RateLimitStrategy({ permits: 100, per: '1s' })])],
      { stores: { circuitBreaker: slow, rateLimit: slowBucket } },
    );
    sleep = (ms) => clock.sleep(ms);
    for (const route of ['a', 'b', 'c', 'd', 'e']) await resilience.run(() => 1, { policy: 'p', route });
    const s = settle(resilience.admin.inspect({ policy: 'p' }));
    await clock.advance(100);
    expect(s.done).toBe(true);
    expect((s.value ?? []).map((snap) => snap.route)).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('a hanging store does not hold a caller abort: run rejects at once with the reason', async () => {
    const { resilience, clock } = withBreakerStore('hang', true);
    const t = trackedController();
    const s = settle(resilience.run(() => 'never', { policy: 'p', signal: t.signal }));
    await clock.advance(10);
    expect(s.done).toBe(false);
    const why = new Error('caller gave up');
    t.ac.abort(why);
    await clock.advance(0);
    expect(s.error).toBe(why);
    expect(t.listeners()).toBe(0);
  });

  it('a probe lease granted after its caller gave up is handed back, so the next call can probe', async () => {
    const inner = new InMemoryCircuitBreakerStore();
    let gate: Promise<unknown> = Promise.resolve();
    const store: CircuitBreakerStore = {
      acquire: (...a) => gate.then(() => inner.acquire(...a)),
      record: (...a) => Promise.resolve(inner.record(...a)),
      inspect: (...a) => Promise.resolve(inner.inspect(...a)),
      reset: (...a) => Promise.resolve(inner.reset(...a)),
    };
    const { resilience, clock } = setup([policy('p', [breaker({ minThroughput: 1 })])], {
      stores: { circuitBreaker: store },
    });
    await resilience.run(() => Promise.reject(infraError()), { policy: 'p' }).catch(() => 0);
    await clock.advance(5000);
    const slow = deferred();
    gate = slow.promise;
    const t = trackedController();
    const a = settle(resilience.run(() => 'never', { policy: 'p', signal: t.signal }));
    await clock.advance(0);
    t.ac.abort(new Error('gone'));
    await clock.advance(0);
    expect(a.done).toBe(true);
    gate = Promise.resolve();
    slow.resolve(undefined); // the store now grants the cancelled call the only probe lease
    await clock.advance(0);
    await expect(resilience.run(() => 'probe', { policy: 'p' })).resolves.toBe('probe');
    expect((await resilience.admin.inspect({ policy: 'p' }))[0]?.breaker?.state).toBe('closed');
  });

  it('a hanging rate-limit store does not hold a deadline either', async () => {
    const { resilience, clock } = withRateStore('hang', true);
    const s = settle(withDeadline(100, () => resilience.run(() => 'never', { policy: 'p' }), clock));
    await clock.advance(100);
    expect(s.error).toMatchObject({ code: 'deadline_exceeded' });
    expect(clock.pendingTimers()).toBe(0);
  });

  it('a latency digest store failure skips the sample and emits store_degraded (latencyDigest)', async () => {
    const digestError = new Error('digest down');
    const { resilience, clock, ofType } = setup(
      [
        policy('p', [
          new AdaptiveBulkheadStrategy({ latencyThreshold: 100, maxConcurrency: 4, latencyQuantile: 0.9 }),
        ]),
      ],
      {
        stores: {
          latencyDigest: {
            observe: () => Promise.reject(digestError),
            read: () => Promise.reject(digestError),
            reset: () => undefined,
          },
        },
      },
    );
    const d = deferred();
    const s = settle(resilience.run(() => d.promise, { policy: 'p' }));
    await clock.advance(500);
    d.resolve('slow');
    await clock.advance(0);
    expect(s.value).toBe('slow');
    expect(ofType('store_degraded')).toEqual([
      expect.objectContaining({ store: 'latencyDigest', error: digestError }),
    ]);
    expect((await resilience.admin.inspect({ policy: 'p' }))[0]?.concurrencyLimit).toBe(4);
  });
});
