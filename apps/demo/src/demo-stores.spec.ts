import 'reflect-metadata';
import { createServer, type AddressInfo } from 'node:net';
import { Logger } from '@nestjs/common';
import { RateLimitStrategy, Resilience, ResiliencePolicy } from '@ballast/core';
import { Redis } from 'ioredis';
import { DemoConfig } from './demo-config';
import { DemoStores } from './demo-stores';
import {
  REDIS_URL,
  RUN_REDIS_TESTS,
  cleanUp,
  keysUnder,
  reportRedisUnreachable,
  requireRedis,
  uniquePrefix,
} from './__tests__/redis-env';

describe('DemoStores', () => {
  it('uses in-memory stores unless REDIS_URL is set', async () => {
    const stores = new DemoStores(new DemoConfig({}));
    expect(stores.stores).toBeUndefined();
    expect(stores.description).toBe('in-memory stores');
    await stores.onApplicationShutdown();
  });

  it('reads REDIS_URL and REDIS_PREFIX (default ballast)', () => {
    expect(new DemoConfig({ REDIS_URL: 'redis://user:pw@example:6379' })).toMatchObject({
      redisUrl: 'redis://user:pw@example:6379',
      redisPrefix: 'ballast',
    });
    expect(new DemoConfig({ REDIS_PREFIX: 'shop' }).redisPrefix).toBe('shop');
  });

  describe('with REDIS_URL at a port where nothing listens', () => {
    let port: number;
    beforeAll(async () => {
      const server = createServer();
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
      await new Promise((resolve) => server.close(resolve));
    });
    afterEach(() => jest.restoreAllMocks());

    it('starts on local state, says so in the banner, and warns once per outage', async () => {
      const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
      const stores = new DemoStores(new DemoConfig({ REDIS_URL: `redis://u:secret@127.0.0.1:${port}` }));
      // Every failure ioredis reports, to wait for several retries instead of for a length of time.
      const emit = jest.spyOn(Redis.prototype, 'emit');
      const failures = () => emit.mock.calls.filter(([event]) => event === 'error').length;
      try {
        await stores.onModuleInit();
        expect(stores.description).toMatch(
          new RegExp(
            `^Redis stores at redis://\\*\\*\\*@127\\.0\\.0\\.1:${port} — UNREACHABLE \\(connect ECONNREFUSED .*\\), failing open`,
          ),
        );
        // ioredis retries after 50, 100, 150… ms and reports each failure: one warning says it all.
        for (let i = 0; failures() < 4; i++) {
          if (i === 500) throw new Error(`ioredis reported ${failures()} failures, expected retries`);
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        expect(warn).toHaveBeenCalledTimes(1);
        expect(String(warn.mock.calls[0]![0])).toMatch(
          /unreachable \(connect ECONNREFUSED .*\): Ballast fails open/,
        );
        expect(String(warn.mock.calls[0]![0])).not.toContain('secret');
      } finally {
        await stores.onApplicationShutdown();
      }
    });
  });

  describe('on a real Redis', () => {
    if (!RUN_REDIS_TESTS) return reportRedisUnreachable();

    let client: Redis | undefined;
    const prefix = uniquePrefix('stores');
    beforeAll(async () => {
      client = await requireRedis();
    });
    afterAll(() => cleanUp(client, prefix));

    it('shares state between replicas (each with its own connection), under REDIS_PREFIX', async () => {
      const config = new DemoConfig({ REDIS_URL, REDIS_PREFIX: prefix });
      const [a, b] = [new DemoStores(config), new DemoStores(config)];
      const replicas: Resilience[] = [];
      try {
        await Promise.all([a.onModuleInit(), b.onModuleInit()]); // as Nest does before the app serves
        expect(a.description).toBe(`Redis stores at ${REDIS_URL}, keys '${prefix}:*'`);
        const replica = (stores: DemoStores) => {
          const r = new Resilience({
            stores: stores.stores!,
            policies: [
              new ResiliencePolicy({
                name: 'limited',
                strategies: [new RateLimitStrategy({ permits: 1, per: '1m' })],
                failOpenOnStoreError: false,
              }),
            ],
          });
          replicas.push(r);
          return r;
        };
        await expect(replica(a).run(() => 'ok', { policy: 'limited' })).resolves.toBe('ok');
        await expect(replica(b).run(() => 'ok', { policy: 'limited' })).rejects.toMatchObject({
          code: 'rate_limited',
        });
        // The control store lists both replicas while they run …
        expect(await keysUnder(client!, prefix)).toEqual([
          `${prefix}:{control}:replicas`,
          `${prefix}:{limited}:rl`,
        ]);
        await Promise.all(replicas.map((r) => r.close()));
        // … and they leave it when they close: nothing of the control plane is left behind.
        expect(await keysUnder(client!, prefix)).toEqual([`${prefix}:{limited}:rl`]);
      } finally {
        await Promise.all(replicas.map((r) => r.close()));
        await a.onApplicationShutdown();
        await b.onApplicationShutdown();
      }
    });
  });
});
