import { AdaptiveThrottleStrategy } from '../strategies/adaptive-throttle-strategy';
import { BulkheadStrategy } from '../strategies/bulkhead-strategy';
import { HedgeStrategy } from '../strategies/hedge-strategy';
import { RateLimitStrategy } from '../strategies/rate-limit-strategy';
import { deferred, infraError, settle, setup } from './helpers';
import { breaker, errorOf, policy } from './kit';

/** The control plane (SPEC §6): inspect, forceOpen, clearForcedOpen, resetBreaker, policies. */

const full = () =>
  setup([
    policy(
      'full',
      [
        new RateLimitStrategy({ permits: 10, per: '1s' }),
        new BulkheadStrategy({ maxConcurrency: 3, maxQueue: 2 }),
        breaker({ minThroughput: 1 }),
      ],
      { hedge: new HedgeStrategy({ delay: 40, maxAttempts: 2 }) },
    ),
    policy('throttle', [new AdaptiveThrottleStrategy({ minThroughput: 2 })]),
    policy('plain', []),
  ]);

describe('admin.inspect', () => {
  it('reports every field of each (policy, route) seen, and only the fields of strategies the policy has', async () => {
    const { resilience, clock } = full();
    const d = deferred();
    settle(resilience.run(() => d.promise, { policy: 'full', route: 'r' }));
    await clock.advance(0);
    await resilience.run(() => Promise.reject(infraError()), { policy: 'throttle' }).catch(() => 0);
    await resilience.run(() => Promise.reject(infraError()), { policy: 'throttle' }).catch(() => 0);
    await resilience.run(() => 1, { policy: 'plain', route: 'x' });
    const all = await resilience.admin.inspect();
    expect(all).toEqual([
      {
        policy: 'full',
        route: 'r',
        forcedOpen: false,
        version: 0,
        mode: 'enforce',
        breaker: { state: 'closed', failureRatio: 0, calls: 0 },
        concurrencyLimit: 3,
        inUse: 1,
        waiting: 0,
        hedgeDelay: 40,
        rateLimitTokens: 9,
      },
      {
        policy: 'throttle',
        route: undefined,
        forcedOpen: false,
        version: 0,
        mode: 'enforce',
        throttleRejectionProbability: 2 / 3,
      },
      { policy: 'plain', route: 'x', forcedOpen: false, version: 0, mode: 'enforce' },
    ]);
    expect(await resilience.admin.inspect({ policy: 'plain' })).toEqual([
      { policy: 'plain', route: 'x', forcedOpen: false, version: 0, mode: 'enforce' },
    ]);
    d.resolve(1);
    await clock.advance(0);
  });

  it('snapshots are copies: mutating one never changes the live state (cockatiel #113)', async () => {
    const { resilience } = full();
    await resilience.run(() => Promise.reject(infraError()), { policy: 'full' }).catch(() => 0);
    const [snap] = await resilience.admin.inspect({ policy: 'full' });
    const mutable = snap as unknown as { breaker: { state: string; calls: number }; forcedOpen: boolean };
    mutable.breaker.state = 'closed';
    mutable.breaker.calls = 0;
    mutable.forcedOpen = true;
    await expect(resilience.run(() => 1, { policy: 'full' })).rejects.toMatchObject({ code: 'circuit_open' });
    const [again] = await resilience.admin.inspect({ policy: 'full' });
    expect(again).toMatchObject({ forcedOpen: false, breaker: { state: 'open' } });
  });

  it('every method rejects (never throws synchronously) on an unknown policy', async () => {
    const { resilience } = full();
    const a = resilience.admin;
    for (const p of [
      () => a.inspect({ policy: 'nope' }),
      () => a.forceOpen('nope'),
      () => a.clearForcedOpen('nope', 'r'),
      () => a.resetBreaker('nope'),
      () => a.retune({ name: 'nope', strategies: [] }),
    ]) {
      await expect(p()).rejects.toMatchObject({ kind: 'configuration', code: 'unknown_policy' });
    }
    expect(await a.policies()).toEqual(['transient', 'occ', 'full', 'throttle', 'plain']);
  });
});

describe('admin.forceOpen / clearForcedOpen', () => {
  it('one route: rejects with resilience_forced_open before any strategy; other routes unaffected', async () => {
    const { resilience, ofType } = full();
    await resilience.admin.forceOpen('full', 'r');
    let ran = false;
    const err = await errorOf(resilience.run(() => (ran = true), { policy: 'full', route: 'r' }));
    expect(ran).toBe(false);
    expect(err).toMatchObject({
      kind: 'infrastructure',
      code: 'resilience_forced_open',
      policy: 'full',
      route: 'r',
    });
    expect(ofType('rejected').map((e) => e.code)).toEqual(['resilience_forced_open']);
    expect(ofType('call').map((e) => e.outcome)).toEqual(['rejected']);
    expect(ofType('hedge_attempt')).toHaveLength(0);
    const [snap] = await resilience.admin.inspect({ policy: 'full' });
    expect(snap).toMatchObject({ forcedOpen: true, rateLimitTokens: 10, inUse: 0, breaker: { calls: 0 } });
    await expect(resilience.run(() => 'ok', { policy: 'full', route: 'other' })).resolves.toBe('ok');
    await resilience.admin.clearForcedOpen('full', 'r');
    await expect(resilience.run(() => 'back', { policy: 'full', route: 'r' })).resolves.toBe('back');
  });

  it('route-less: every route, including routes first seen later, until cleared', async () => {
    const { resilience } = full();
    await resilience.run(() => 1, { policy: 'full', route: 'seen' });
    await resilience.admin.forceOpen('full');
    for (const route of ['seen', 'new', undefined]) {
      await expect(resilience.run(() => 1, { policy: 'full', route })).rejects.toMatchObject({
        code: 'resilience_forced_open',
      });
    }
    expect((await resilience.admin.inspect({ policy: 'full' })).every((s) => s.forcedOpen)).toBe(true);
    await expect(resilience.run(() => 'other policy', { policy: 'plain' })).resolves.toBe('other policy');
    await resilience.admin.clearForcedOpen('full');
    for (const route of ['seen', 'new', 'newer', undefined]) {
      await expect(resilience.run(() => route, { policy: 'full', route })).resolves.toBe(route);
    }
  });

  it('route-less before any traffic: inspect shows the policy-wide entry forced open (nothing hides it)', async () => {
    const { resilience } = full();
    await resilience.admin.forceOpen('full');
    const snaps = await resilience.admin.inspect({ policy: 'full' });
    expect(snaps).toHaveLength(1);
    expect(snaps[0]).toMatchObject({
      policy: 'full',
      route: undefined,
      forcedOpen: true,
      breaker: { calls: 0 },
    });
    await resilience.admin.clearForcedOpen('full');
    expect(await resilience.admin.inspect({ policy: 'full' })).toEqual([]); // inspecting created no key
  });

  it('calls already running when a route is forced open finish normally', async () => {
    const { resilience, clock } = full();
    const d = deferred<string>();
    const s = settle(resilience.run(() => d.promise, { policy: 'full', route: 'r' }));
    await clock.advance(0);
    await resilience.admin.forceOpen('full', 'r');
    d.resolve('finished');
    await clock.advance(0);
    expect(s.value).toBe('finished');
  });
});

describe('admin.resetBreaker', () => {
  it('closes an open breaker with an empty window and emits breaker_state', async () => {
    const { resilience, ofType } = full();
    for (const route of ['a', 'b']) {
      await resilience.run(() => Promise.reject(infraError()), { policy: 'full', route }).catch(() => 0);
    }
    await resilience.admin.resetBreaker('full', 'a');
    await expect(resilience.run(() => 'a ok', { policy: 'full', route: 'a' })).resolves.toBe('a ok');
    await expect(resilience.run(() => 1, { policy: 'full', route: 'b' })).rejects.toMatchObject({
      code: 'circuit_open',
    });
    await resilience.admin.resetBreaker('full'); // every route
    await expect(resilience.run(() => 'b ok', { policy: 'full', route: 'b' })).resolves.toBe('b ok');
    expect(ofType('breaker_state').map((e) => `${e.route}:${e.from}→${e.to}`)).toEqual([
      'a:closed→open',
      'b:closed→open',
      'a:open→closed',
      'b:open→closed',
    ]);
    const snaps = await resilience.admin.inspect({ policy: 'full' });
    expect(snaps.map((s) => s.breaker)).toEqual([
      { state: 'closed', failureRatio: 0, calls: 0 }, // reset twice; the closed one emits nothing
      { state: 'closed', failureRatio: 0, calls: 1 },
    ]);
  });

  it('is a no-op for a policy without a breaker', async () => {
    const { resilience } = full();
    await expect(resilience.admin.resetBreaker('plain')).resolves.toBeUndefined();
  });

  it('outcomes of calls admitted before the reset do not move the new state', async () => {
    const { resilience, clock } = full();
    const d = deferred();
    settle(resilience.run(() => d.promise, { policy: 'full' }));
    await clock.advance(0);
    await resilience.admin.resetBreaker('full');
    d.reject(infraError());
    await clock.advance(0);
    const [snap] = await resilience.admin.inspect({ policy: 'full' });
    expect(snap?.breaker).toEqual({ state: 'closed', failureRatio: 0, calls: 0 });
  });
});
