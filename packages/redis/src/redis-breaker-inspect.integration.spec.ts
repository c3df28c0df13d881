import { CircuitBreakerStrategy, Resilience, ResiliencePolicy, type ResilienceEvent } from '@ballast/core';
import { FakeClock } from '@ballast/testing';
import type { Redis } from 'ioredis';
import {
  RUN_REDIS_TESTS,
  cleanUp,
  newClient,
  reportRedisUnreachable,
  requireRedis,
  uniquePrefix,
} from './__tests__/redis-test-env';
import { redisCircuitBreakerStore } from './redis-circuit-breaker-store';

// What an operator sees of a breaker shared through Redis on the server clock (the production setting): the
// process's own clock (a FakeClock at 0 here) is nowhere near Redis TIME, so a retryAfter that were an absolute time,
// or a difference of the two clocks, would be far outside the break.
if (RUN_REDIS_TESTS) {
  describe('RedisCircuitBreakerStore through admin.inspect and events (server clock)', () => {
    const prefix = uniquePrefix('breaker-inspect');
    let client: Redis;
    beforeAll(async () => {
      client = newClient();
      await requireRedis(client);
    });
    afterAll(() => cleanUp(prefix, [client]));

    it('an open breaker reports what tripped it and a relative retryAfter within the break', async () => {
      const breakDuration = 60_000;
      const resilience = new Resilience({
        policies: [
          new ResiliencePolicy({
            name: 'inventory',
            strategies: [
              new CircuitBreakerStrategy({
                failureRatio: 0.5,
                samplingWindow: '10s',
                minThroughput: 4,
                breakDuration,
              }),
            ],
          }),
        ],
        clock: new FakeClock(),
        stores: { circuitBreaker: redisCircuitBreakerStore(client, { prefix, commandTimeout: 5000 }) },
      });
      const events: ResilienceEvent[] = [];
      // the trip is recorded in the background (a remote record is not awaited by the call): wait for its event
      const tripped = new Promise<void>((resolve) =>
        resilience.on((e) => {
          events.push(e);
          if (e.type === 'breaker_state') resolve();
        }),
      );
      const run = (fn: () => unknown) => resilience.run(fn, { policy: 'inventory' }).catch(() => undefined);
      await run(() => 'ok');
      for (let i = 0; i < 3; i++)
        await run(() => Promise.reject(Object.assign(new Error('down'), { code: 'ECONNRESET' })));
      await tripped;
      expect(events.filter((e) => e.type === 'breaker_state')).toEqual([
        {
          type: 'breaker_state',
          policy: 'inventory',
          route: undefined,
          from: 'closed',
          to: 'open',
          failureRatio: 0.75,
          calls: 4,
        },
      ]);
      const [snapshot] = await resilience.admin.inspect({ policy: 'inventory' });
      expect(snapshot?.localFallback).toBeUndefined();
      expect(snapshot?.breaker).toMatchObject({ state: 'open', failureRatio: 0.75, calls: 4 });
      const retryAfter = snapshot?.breaker?.retryAfter ?? 0;
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(breakDuration);
    });
  });
} else {
  describe('RedisCircuitBreakerStore through admin.inspect and events', () => reportRedisUnreachable());
}
