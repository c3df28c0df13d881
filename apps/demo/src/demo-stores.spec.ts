import 'reflect-metadata';
import { RateLimitStrategy, Resilience, ResiliencePolicy } from '@ballast/core';
import { DemoConfig } from './demo-config';
import { DemoStores } from './demo-stores';

describe('DemoStores', () => {
  it('uses in-memory stores unless REDIS_URL is set', async () => {
    const stores = new DemoStores(new DemoConfig({}));
    expect(stores.stores).toBeUndefined();
    expect(stores.description).toBe('in-memory stores');
    await stores.onApplicationShutdown();
  });

  it('uses the Redis stores when REDIS_URL is set (against the real server when the environment has one)', async () => {
    const url = process.env['REDIS_URL'];
    if (url === undefined) {
      // Without a server, still check the wiring decision without connecting.
      expect(new DemoConfig({ REDIS_URL: 'redis://user:pw@example:6379' }).redisUrl).toBe(
        'redis://user:pw@example:6379',
      );
      return;
    }
    // Two replicas, each with its own connection: the state they share can only live in Redis.
    const [a, b] = [
      new DemoStores(new DemoConfig({ REDIS_URL: url })),
      new DemoStores(new DemoConfig({ REDIS_URL: url })),
    ];
    try {
      await Promise.all([a.onModuleInit(), b.onModuleInit()]); // as Nest does before the app serves
      expect(a.description).toMatch(/^Redis stores at /);
      const name = `demo-spec-${process.pid}-${Date.now()}`;
      const replica = (stores: DemoStores) =>
        new Resilience({
          stores: stores.stores!,
          policies: [
            new ResiliencePolicy({
              name,
              strategies: [new RateLimitStrategy({ permits: 1, per: '1m' })],
              failOpenOnStoreError: false,
            }),
          ],
        });
      await expect(replica(a).run(() => 'ok', { policy: name })).resolves.toBe('ok');
      await expect(replica(b).run(() => 'ok', { policy: name })).rejects.toMatchObject({
        code: 'rate_limited',
      });
    } finally {
      await a.onApplicationShutdown();
      await b.onApplicationShutdown();
    }
  });
});
