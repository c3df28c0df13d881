import { FakeClock } from '@ballast/testing';
import { Resilience, type ResilienceOptions } from '../resilience';
import type { ResilienceEvent } from '../events';
import { RetryStrategy } from '../strategies/retry-strategy';
import { FallbackStrategy } from '../strategies/fallback-strategy';
import { breaker, codeOf, errorOf, policy } from '../__tests__/kit';
import { infraError } from '../__tests__/helpers';
import type { ControlStore } from './control-store';
import { InMemoryControlStore } from './in-memory-control-store';

/** SPEC §14.1 on one FakeClock: several `Resilience` instances sharing one control store behave as a fleet. */

const policies = () => [
  policy('payments', [breaker(), new RetryStrategy({ maxAttempts: 1 })]),
  policy('search', [new RetryStrategy({ maxAttempts: 1 })]),
];

function fleet(
  n: number,
  store: ControlStore = new InMemoryControlStore(),
  extra: Partial<ResilienceOptions> = {},
) {
  const clock = new FakeClock(1000);
  const events: ResilienceEvent[][] = [];
  const replicas = Array.from({ length: n }, (_, i) => {
    const r = new Resilience({
      policies: policies(),
      clock,
      stores: { control: store },
      replicaId: `replica-${i}`,
      ...extra,
    });
    const seen: ResilienceEvent[] = [];
    r.on((e) => seen.push(e));
    events.push(seen);
    return r;
  });
  const join = (id: string): Resilience =>
    new Resilience({ policies: policies(), clock, stores: { control: store }, replicaId: id, ...extra });
  return { clock, store, replicas, events, join };
}

/** What a call through `policy` on each replica ends with: 'ok' or the rejection code. */
async function outcomes(
  replicas: readonly Resilience[],
  policyName = 'payments',
  route?: string,
): Promise<string[]> {
  return Promise.all(
    replicas.map((r) =>
      r
        .run(() => 'ok', { policy: policyName, route })
        .then(
          (v) => v,
          (e: unknown) => codeOf(e) ?? 'error',
        ),
    ),
  );
}

/** A store that can go down, and can lose the notices of one subscriber (a dropped subscription). */
class FlakyStore implements ControlStore {
  down = false;
  deaf = new Set<number>();
  #subscribers = 0;
  readonly reconcileInterval = 1000;
  readonly heartbeatInterval = 5000;
  constructor(readonly inner = new InMemoryControlStore()) {}
  #guard(): void {
    if (this.down) throw infraError('control store down');
  }
  read(now: number) {
    this.#guard();
    return this.inner.read(now);
  }
  seq() {
    this.#guard();
    return this.inner.seq();
  }
  write(...args: Parameters<ControlStore['write']>) {
    this.#guard();
    return this.inner.write(...args);
  }
  record(...args: Parameters<ControlStore['record']>) {
    this.#guard();
    return this.inner.record(...args);
  }
  audit(limit: number) {
    this.#guard();
    return this.inner.audit(limit);
  }
  subscribe(onNotice: (seq: number) => void) {
    const n = this.#subscribers++;
    return this.inner.subscribe((seq) => {
      if (!this.deaf.has(n)) onNotice(seq);
    });
  }
  heartbeat(...args: Parameters<ControlStore['heartbeat']>) {
    this.#guard();
    return this.inner.heartbeat(...args);
  }
  leave(id: string) {
    return this.inner.leave(id);
  }
  replicas(now: number) {
    this.#guard();
    return this.inner.replicas(now);
  }
}

describe('fleet control plane (SPEC §14.1)', () => {
  it('a force-open on one replica is in force on every replica at once, and a clear on another lifts it everywhere', async () => {
    const { replicas, events } = fleet(3);
    await replicas[0]!.admin.forceOpen('payments', undefined, { reason: 'incident 42', actor: 'alice' });
    expect(await outcomes(replicas)).toEqual(Array(3).fill('resilience_forced_open'));
    expect(await outcomes(replicas, 'search')).toEqual(['ok', 'ok', 'ok']);
    for (const r of replicas)
      expect((await r.admin.inspect({ policy: 'payments' }))[0]).toMatchObject({
        forcedOpen: true,
        version: 0,
      });
    for (const seen of events)
      expect(seen.filter((e) => e.type === 'control_applied')).toEqual([
        {
          type: 'control_applied',
          policy: 'payments',
          route: undefined,
          action: 'forceOpen',
          scope: 'fleet',
        },
      ]);
    await replicas[2]!.admin.clearForcedOpen('payments');
    expect(await outcomes(replicas)).toEqual(['ok', 'ok', 'ok']);
  });

  it('a route force-open with a ttl clears itself on every replica when it ends, and leaves no timer', async () => {
    const { replicas, clock } = fleet(3);
    await replicas[1]!.admin.forceOpen('payments', 'eu', { ttl: '10s' });
    expect(await outcomes(replicas, 'payments', 'eu')).toEqual(Array(3).fill('resilience_forced_open'));
    expect(await outcomes(replicas, 'payments', 'us')).toEqual(['ok', 'ok', 'ok']);
    await clock.advance(9_999);
    expect(await outcomes(replicas, 'payments', 'eu')).toEqual(Array(3).fill('resilience_forced_open'));
    await clock.advance(1);
    expect(await outcomes(replicas, 'payments', 'eu')).toEqual(['ok', 'ok', 'ok']);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('a replica that starts while overrides stand applies them before its first call', async () => {
    const { replicas, join } = fleet(2);
    await replicas[0]!.admin.forceOpen('payments', 'eu', { ttl: '1m' });
    await replicas[0]!.admin.retune({ name: 'search', strategies: [{ type: 'retry', maxAttempts: 3 }] });
    const late = join('late');
    expect(await outcomes([late], 'payments', 'eu')).toEqual(['resilience_forced_open']);
    expect(late.policy('search')?.retry?.options.maxAttempts).toBe(3);
    expect((await late.admin.inspect({ policy: 'search' }))[0]?.version ?? 1).toBe(1);
    await Promise.all([...replicas, late].map((r) => r.close()));
  });

  it('with an asynchronous store, calls made before the standing overrides are read wait for them', async () => {
    const inner = new InMemoryControlStore();
    await new Resilience({ policies: policies(), stores: { control: inner } }).admin.forceOpen('payments');
    const slow: ControlStore = {
      read: async (now) => inner.read(now),
      seq: async () => inner.seq(),
      write: async (c, now) => inner.write(c, now),
      record: async (e) => inner.record(e),
      audit: async (l) => inner.audit(l),
      subscribe: async (f) => inner.subscribe(f),
      heartbeat: async (r, t, now) => inner.heartbeat(r, t, now),
      leave: async (id) => inner.leave(id),
      replicas: async (now) => inner.replicas(now),
    };
    const r = new Resilience({ policies: policies(), stores: { control: slow } });
    const first = r.run(() => 'ran', { policy: 'payments' }); // before the store answered
    expect(codeOf(await errorOf(first))).toBe('resilience_forced_open');
    await r.ready();
    await r.close();
  });

  it('retune: versions count fleet retunes, and of two compare-and-set writers exactly one wins', async () => {
    const { replicas } = fleet(3);
    const spec = (n: number) => ({ name: 'search', strategies: [{ type: 'retry', maxAttempts: n }] });
    const results = await Promise.allSettled([
      replicas[0]!.admin.retune(spec(2), { ifVersion: 0 }),
      replicas[1]!.admin.retune(spec(4), { ifVersion: 0 }),
    ]);
    const won = results.filter((r) => r.status === 'fulfilled');
    const lost = results.filter((r) => r.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect((won[0] as PromiseFulfilledResult<unknown>).value).toEqual({ policy: 'search', version: 1 });
    expect((lost[0] as PromiseRejectedResult).reason).toMatchObject({
      kind: 'conflict',
      code: 'version_conflict',
      details: { policy: 'search', version: 1 },
    });
    const attempts = replicas.map((r) => r.policy('search')?.retry?.options.maxAttempts);
    expect(new Set(attempts).size).toBe(1); // every replica runs the winner's spec
    for (const r of replicas)
      expect((await r.admin.inspect({ policy: 'search' })).every((s) => s.version === 1)).toBe(true);
    await expect(replicas[2]!.admin.retune(spec(5), { ifVersion: 1 })).resolves.toEqual({
      policy: 'search',
      version: 2,
    });
  });

  it('an invalid spec is refused before anything is published', async () => {
    const { replicas, store } = fleet(2);
    const before = replicas[1]!.policy('search');
    const err = await errorOf(
      replicas[0]!.admin.retune({ name: 'search', strategies: [{ type: 'retry', maxAttempts: -1 }] }),
    );
    expect(err).toMatchObject({ kind: 'configuration', code: 'invalid_policy' });
    expect(String((err as Error).message)).toContain('strategies[0].maxAttempts');
    expect(await store.seq()).toBe(0);
    expect(replicas[1]!.policy('search')).toBe(before);
  });

  it('a fleet retune cannot carry a fallback function through a shared store; the local scope can', async () => {
    const { replicas } = fleet(2);
    const withFallback = policy('search', [new RetryStrategy({ maxAttempts: 2 })], {
      fallback: new FallbackStrategy({ fallback: () => 'cached' }),
    });
    expect(await errorOf(replicas[0]!.admin.retune(withFallback))).toMatchObject({ kind: 'configuration' });
    await expect(replicas[0]!.admin.retune(withFallback, { scope: 'local' })).resolves.toEqual({
      policy: 'search',
      version: 0,
    });
    expect(replicas[0]!.policy('search')).toBe(withFallback);
    expect(replicas[1]!.policy('search')?.fallback).toBeUndefined();
  });

  it('scope local acts on one replica only, and is audited as such', async () => {
    const { replicas } = fleet(3);
    await replicas[1]!.admin.forceOpen('payments', undefined, {
      scope: 'local',
      actor: 'bob',
      reason: 'drain',
    });
    expect(await outcomes(replicas)).toEqual(['ok', 'resilience_forced_open', 'ok']);
    expect((await replicas[0]!.admin.audit())[0]).toMatchObject({
      action: 'forceOpen',
      policy: 'payments',
      scope: 'local',
      actor: 'bob',
      reason: 'drain',
      replica: 'replica-1',
    });
    await replicas[1]!.admin.clearForcedOpen('payments', undefined, { scope: 'local' });
    expect(await outcomes(replicas)).toEqual(['ok', 'ok', 'ok']);
  });

  it('a fleet reset closes the breaker each replica holds in its own store', async () => {
    const { replicas } = fleet(2);
    for (const r of replicas)
      for (let i = 0; i < 4; i++)
        await r.run(() => Promise.reject(infraError()), { policy: 'payments' }).catch(() => 0);
    expect(await outcomes(replicas)).toEqual(['circuit_open', 'circuit_open']);
    await replicas[0]!.admin.resetBreaker('payments', undefined, { reason: 'fixed' });
    expect(await outcomes(replicas)).toEqual(['ok', 'ok']);
  });

  it('replicas() lists the fleet with the control seq each applied; audit() is newest first with who and why', async () => {
    const { replicas, join } = fleet(2);
    await replicas[0]!.admin.forceOpen('payments', 'eu', { ttl: 60_000, actor: 'alice', reason: 'r1' });
    await replicas[1]!.admin.retune({ name: 'search', strategies: [{ type: 'retry', maxAttempts: 2 }] });
    const late = join('replica-late');
    const listed = await late.admin.replicas();
    expect(listed.map((r) => r.id).sort()).toEqual(['replica-0', 'replica-1', 'replica-late']);
    expect(listed.find((r) => r.id === 'replica-late')?.version).toBe(2);
    const trail = await late.admin.audit({ limit: 10 });
    expect(trail.map((e) => [e.action, e.replica, e.scope])).toEqual([
      ['retune', 'replica-1', 'fleet'],
      ['forceOpen', 'replica-0', 'fleet'],
    ]);
    expect(trail[1]).toMatchObject({ route: 'eu', ttl: 60_000, actor: 'alice', reason: 'r1' });
    expect(trail[0]).toMatchObject({ version: 1, spec: { name: 'search' } });
    await late.close();
    expect((await replicas[0]!.admin.replicas()).map((r) => r.id).sort()).toEqual(['replica-0', 'replica-1']);
  });

  it('store down: a fleet write fails with resilience_store_unavailable and changes nothing; reads and the local scope work', async () => {
    const flaky = new FlakyStore();
    const { replicas, clock } = fleet(2, flaky);
    flaky.down = true;
    expect(await errorOf(replicas[0]!.admin.forceOpen('payments'))).toMatchObject({
      kind: 'infrastructure',
      code: 'resilience_store_unavailable',
    });
    expect(await outcomes(replicas)).toEqual(['ok', 'ok']);
    expect(await replicas[0]!.admin.inspect({ policy: 'payments' })).toEqual([
      expect.objectContaining({ forcedOpen: false }),
    ]);
    await replicas[0]!.admin.forceOpen('payments', undefined, { scope: 'local', reason: 'store down' });
    expect(await outcomes(replicas)).toEqual(['resilience_forced_open', 'ok']);
    expect((await replicas[0]!.admin.audit())[0]).toMatchObject({ scope: 'local', reason: 'store down' });
    expect((await replicas[1]!.admin.replicas()).map((r) => r.id)).toEqual(['replica-1']);
    flaky.down = false;
    // Back: a fleet write reaches both again.
    await replicas[1]!.admin.forceOpen('search');
    expect(await outcomes(replicas, 'search')).toEqual(['resilience_forced_open', 'resilience_forced_open']);
    await Promise.all(replicas.map((r) => r.close()));
    expect(clock.pendingTimers()).toBe(0);
  });

  it('a replica that missed notices (its subscription dropped) converges at the next reconcile', async () => {
    const flaky = new FlakyStore();
    const { replicas, clock } = fleet(2, flaky);
    flaky.deaf.add(1); // replica-1 hears nothing from now on
    await replicas[0]!.admin.forceOpen('payments', 'eu');
    expect(await outcomes(replicas, 'payments', 'eu')).toEqual(['resilience_forced_open', 'ok']);
    await clock.advance(1000);
    expect(await outcomes(replicas, 'payments', 'eu')).toEqual([
      'resilience_forced_open',
      'resilience_forced_open',
    ]);
    // The store was down while a change would have been pushed: it converges once the store answers again.
    flaky.down = true;
    await clock.advance(3000);
    flaky.down = false;
    await flaky.inner.write(
      { action: 'clearForcedOpen', policy: 'payments', replica: 'elsewhere' },
      clock.now(),
    );
    await clock.advance(1000);
    expect(await outcomes(replicas, 'payments', 'eu')).toEqual(['ok', 'ok']);
    await Promise.all(replicas.map((r) => r.close()));
    expect(clock.pendingTimers()).toBe(0);
  });

  it('a setting this replica cannot read (a mode or chaos patch someone else wrote) is not applied, and is warned about once', async () => {
    const { replicas, store } = fleet(2);
    const warned = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      store.write({ action: 'setMode', policy: 'search', value: 'dry-run', replica: 'x' }, 0);
      store.write({ action: 'setChaos', policy: 'search', value: { fault: { rate: 7 } }, replica: 'x' }, 0);
      expect(await outcomes(replicas, 'search')).toEqual(['ok', 'ok']);
      for (const r of replicas)
        expect((await r.admin.inspect({ policy: 'search' }))[0]?.mode).toBe('enforce');
      expect(warned.mock.calls.map((c) => c[0])).toEqual([
        expect.stringContaining("the fleet's setMode of 'search' (\"dry-run\") is invalid here"),
        expect.stringContaining("the fleet's setMode of 'search' (\"dry-run\") is invalid here"),
        expect.stringContaining("the fleet's setChaos of 'search'"),
        expect.stringContaining("the fleet's setChaos of 'search'"),
      ]);
      await replicas[0]!.admin.retune(policy('search', [new RetryStrategy({ maxAttempts: 2 })]));
      expect(warned).toHaveBeenCalledTimes(4); // a later sync does not warn again about the same change
    } finally {
      warned.mockRestore();
    }
  });

  it('a local force-open with a ttl: forcing again re-arms its expiry, a local clear drops it', async () => {
    const { replicas, clock } = fleet(1);
    const [r] = replicas;
    await r!.admin.forceOpen('payments', 'eu', { ttl: '10s', scope: 'local' });
    await clock.advance(8000);
    await r!.admin.forceOpen('payments', 'eu', { ttl: '10s', scope: 'local' }); // re-armed: 10 s from now
    await clock.advance(5000);
    expect(await outcomes([r!], 'payments', 'eu')).toEqual(['resilience_forced_open']);
    await clock.advance(5000);
    expect(await outcomes([r!], 'payments', 'eu')).toEqual(['ok']);
    await r!.admin.forceOpen('payments', undefined, { ttl: '10s', scope: 'local' });
    await r!.admin.forceOpen('payments', 'eu', { ttl: '10s', scope: 'local' });
    await r!.admin.clearForcedOpen('payments', undefined, { scope: 'local' }); // every route: both expiries go
    expect(clock.pendingTimers()).toBe(0);
    await r!.close();
  });

  it('a spec this replica cannot read (someone wrote garbage to the store) is not applied: calls go on, a warning says why', async () => {
    const { replicas, store } = fleet(2);
    const warned = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      store.write({ action: 'retune', policy: 'search', spec: { strategies: 'nope' }, replica: 'x' }, 0);
      expect(await outcomes(replicas, 'search')).toEqual(['ok', 'ok']);
      expect(replicas[0]!.policy('search')?.retry?.options.maxAttempts).toBe(1);
      expect(warned).toHaveBeenCalledWith(
        expect.stringContaining("the fleet's retune of 'search'"),
        'BallastControlWarning',
      );
    } finally {
      warned.mockRestore();
    }
  });

  it('bad admin arguments name each field, constraint and value', async () => {
    const { replicas } = fleet(1);
    const err = await errorOf(
      replicas[0]!.admin.forceOpen(
        'payments',
        7 as never,
        { ttl: '10 min', scope: 'all', who: 'x' } as never,
      ),
    );
    expect(err).toMatchObject({ kind: 'configuration' });
    const message = String((err as Error).message);
    for (const part of [
      'route must be a string or undefined, got 7',
      "options.who must be a known option (scope, reason, actor, ttl), got 'x'",
      "options.scope must be one of 'fleet', 'local', got 'all'",
      "options.ttl must be a duration > 0, got '10 min'",
    ])
      expect(message).toContain(part);
    expect(await errorOf(replicas[0]!.admin.retune(policies()[1], { ifVersion: -1 }))).toMatchObject({
      kind: 'configuration',
    });
    expect(await errorOf(replicas[0]!.admin.audit({ limit: 0 }))).toMatchObject({ kind: 'configuration' });
  });

  it('close() stops heartbeats, reconcile and expiry timers: the clock holds none of them after it', async () => {
    const flaky = new FlakyStore();
    const { replicas, clock } = fleet(2, flaky);
    await replicas[0]!.admin.forceOpen('payments', 'eu', { ttl: '1h' });
    await replicas[1]!.admin.forceOpen('search', undefined, { ttl: '1h', scope: 'local' });
    expect(clock.pendingTimers()).toBeGreaterThan(0);
    await Promise.all(replicas.map((r) => r.close()));
    expect(clock.pendingTimers()).toBe(0);
  });
});
