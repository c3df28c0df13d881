import { ResiliencePolicy } from '../policy/resilience-policy';
import { CircuitBreakerStrategy } from '../strategies/circuit-breaker-strategy';
import type { CircuitBreakerStore } from '../stores/ports';
import { infraError, setup } from './helpers';

/** Breaker-only admission of streams (SPEC §9): gate on opening, one outcome when the stream ends. */
const breakerPolicy = (name = 'feed', failOpenOnStoreError = true) =>
  new ResiliencePolicy({
    name,
    failOpenOnStoreError,
    strategies: [
      new CircuitBreakerStrategy({
        failureRatio: 0.5,
        samplingWindow: '10s',
        minThroughput: 2,
        breakDuration: '5s',
        halfOpenMaxCalls: 1,
      }),
    ],
  });

describe('Resilience.admitStream', () => {
  it('admits while closed, counts a failed stream, and refuses with circuit_open once tripped', async () => {
    const { resilience, ofType } = setup([breakerPolicy()]);
    (await resilience.admitStream('feed', { route: 'r' })).settle(infraError());
    (await resilience.admitStream('feed', { route: 'r' })).settle(infraError());
    expect(ofType('breaker_state')).toEqual([
      {
        type: 'breaker_state',
        policy: 'feed',
        route: 'r',
        from: 'closed',
        to: 'open',
        failureRatio: 1,
        calls: 2,
      },
    ]);
    await expect(resilience.admitStream('feed', { route: 'r' })).rejects.toMatchObject({
      kind: 'infrastructure',
      code: 'circuit_open',
      policy: 'feed',
      route: 'r',
    });
    expect(ofType('rejected').map((e) => e.code)).toEqual(['circuit_open']);
    expect(ofType('call').map((e) => e.outcome)).toEqual(['failure', 'failure', 'rejected']);
  });

  it('a completed stream is a success; settling twice records once', async () => {
    const { resilience } = setup([breakerPolicy()]);
    const p = await resilience.admitStream('feed');
    p.settle();
    p.settle(infraError());
    const [snap] = await resilience.admin.inspect({ policy: 'feed' });
    expect(snap?.breaker).toEqual({ state: 'closed', failureRatio: 0, calls: 1 });
  });

  it('a cancelled half-open probe gives its lease back instead of closing or re-opening', async () => {
    const { resilience, clock } = setup([breakerPolicy()]);
    for (let i = 0; i < 2; i++) (await resilience.admitStream('feed')).settle(infraError());
    await clock.advance(5000);
    const probe = await resilience.admitStream('feed');
    await expect(resilience.admitStream('feed')).rejects.toMatchObject({ code: 'circuit_open' });
    probe.settle(undefined, true);
    const again = await resilience.admitStream('feed');
    again.settle();
    const [snap] = await resilience.admin.inspect({ policy: 'feed' });
    expect(snap?.breaker?.state).toBe('closed');
  });

  it('is refused while forced open, and for unknown policies', async () => {
    const { resilience } = setup([breakerPolicy()]);
    await resilience.admin.forceOpen('feed');
    await expect(resilience.admitStream('feed', { route: 'x' })).rejects.toMatchObject({
      code: 'resilience_forced_open',
    });
    await expect(resilience.admitStream('nope')).rejects.toMatchObject({ code: 'unknown_policy' });
  });

  it('follows failOpenOnStoreError when the breaker store throws', async () => {
    const broken: CircuitBreakerStore = {
      acquire: () => Promise.reject(new Error('store down')),
      record: () => Promise.reject(new Error('store down')),
      inspect: () => Promise.reject(new Error('store down')),
      reset: () => Promise.reject(new Error('store down')),
    };
    const open = setup([breakerPolicy('feed', true)], { stores: { circuitBreaker: broken } });
    const p = await open.resilience.admitStream('feed');
    p.settle();
    expect(open.ofType('store_degraded').map((e) => e.store)).toEqual(['circuitBreaker']);
    const closed = setup([breakerPolicy('feed', false)], { stores: { circuitBreaker: broken } });
    await expect(closed.resilience.admitStream('feed')).rejects.toMatchObject({
      code: 'resilience_store_unavailable',
    });
  });

  it('a policy without a breaker admits every stream (still gated by force-open)', async () => {
    const { resilience, ofType } = setup([new ResiliencePolicy({ name: 'plain', strategies: [] })]);
    const p = await resilience.admitStream('plain');
    p.settle(infraError());
    expect(ofType('call').map((e) => e.outcome)).toEqual(['failure']);
  });
});
