import { FakeClock } from '@ballast/testing';
import { Resilience } from '../resilience';
import { InMemoryCircuitBreakerStore } from '../stores/in-memory-circuit-breaker-store';
import { RateLimitStrategy } from '../strategies/rate-limit-strategy';
import { infraError, setup } from './helpers';
import { breaker, codeOf, errorOf, policy } from './kit';

/**
 * The control plane on routes this process has never seen (SPEC §5 LRU, §6): clearing or resetting a route must
 * not create per-key state, or an operator's loop over routes (a script, a dashboard button per route) grows the
 * key map and evicts the idle keys real traffic uses — and with them their rate-limit bucket and breaker window.
 */

const limited = (maxKeysPerPolicy = 2) =>
  setup([policy('p', [new RateLimitStrategy({ permits: 2, per: '1h' }), breaker({ minThroughput: 1 })])], {
    maxKeysPerPolicy,
  });

describe('admin on unseen routes', () => {
  it('clearForcedOpen and resetBreaker on unseen routes create no key and evict no real one', async () => {
    const { resilience, ofType } = limited();
    await resilience.run(() => 1, { policy: 'p', route: 'a' });
    await resilience.run(() => 1, { policy: 'p', route: 'a' }); // 'a' spent both of its tokens
    for (let i = 0; i < 5; i++) {
      await resilience.admin.clearForcedOpen('p', `ghost-${i}`);
      await resilience.admin.resetBreaker('p', `ghost-${i}`);
    }
    const snaps = await resilience.admin.inspect({ policy: 'p' });
    expect(snaps.map((s) => s.route)).toEqual(['a']);
    expect(snaps[0]?.rateLimitTokens).toBeCloseTo(0, 3);
    // 'a' kept its bucket: evicted, it would have started over full and let a third call through
    expect(codeOf(await errorOf(resilience.run(() => 1, { policy: 'p', route: 'a' })))).toBe('rate_limited');
    expect(ofType('breaker_state')).toEqual([]); // nothing this process saw changed state
  });

  it('resetBreaker on a route this replica never saw still resets the shared store (the fleet breaker)', async () => {
    // replicas sharing one breaker store, as with @ballast/redis
    const clock = new FakeClock();
    const shared = new InMemoryCircuitBreakerStore();
    const replica = () =>
      new Resilience({
        policies: [policy('p', [breaker({ minThroughput: 1 })])],
        clock,
        stores: { circuitBreaker: shared },
      });
    const [a, b, c] = [replica(), replica(), replica()];
    await a.run(() => Promise.reject(infraError()), { policy: 'p', route: 'r' }).catch(() => 0);
    expect(codeOf(await errorOf(b.run(() => 1, { policy: 'p', route: 'r' })))).toBe('circuit_open');
    await c.admin.resetBreaker('p', 'r'); // c never called 'r'
    expect(await c.admin.inspect({ policy: 'p' })).toEqual([]);
    await expect(b.run(() => 'closed again', { policy: 'p', route: 'r' })).resolves.toBe('closed again');
  });

  it('a route-less resetBreaker on a replica that never served the policy resets its policy-wide shared state', async () => {
    const clock = new FakeClock();
    const shared = new InMemoryCircuitBreakerStore();
    const replica = () =>
      new Resilience({
        policies: [policy('p', [breaker({ minThroughput: 1 })])],
        clock,
        stores: { circuitBreaker: shared },
      });
    const [a, b, c] = [replica(), replica(), replica()];
    await a.run(() => Promise.reject(infraError()), { policy: 'p' }).catch(() => 0);
    expect(codeOf(await errorOf(b.run(() => 1, { policy: 'p' })))).toBe('circuit_open');
    await c.admin.resetBreaker('p'); // the load balancer sent the reset to c, which never served 'p'
    expect(await c.admin.inspect({ policy: 'p' })).toEqual([]);
    await expect(b.run(() => 'closed again', { policy: 'p' })).resolves.toBe('closed again');
  });

  it('clearForcedOpen on a route forced earlier still clears it; forceOpen on an unseen route registers it', async () => {
    const { resilience } = limited();
    await resilience.admin.forceOpen('p', 'never-called');
    expect((await resilience.admin.inspect({ policy: 'p' })).map((s) => [s.route, s.forcedOpen])).toEqual([
      ['never-called', true],
    ]);
    await resilience.admin.clearForcedOpen('p', 'never-called');
    await expect(resilience.run(() => 'ok', { policy: 'p', route: 'never-called' })).resolves.toBe('ok');
  });
});
