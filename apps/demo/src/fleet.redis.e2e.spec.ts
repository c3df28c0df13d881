import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import type { Redis } from 'ioredis';
import request from 'supertest';
import { AppModule } from './app.module';
import { DemoConfig } from './demo-config';
import { InventoryBackend } from './inventory/inventory-backend';
import {
  REDIS_URL,
  RUN_REDIS_TESTS,
  cleanUp,
  keysUnder,
  reportRedisUnreachable,
  requireRedis,
  uniquePrefix,
} from './__tests__/redis-env';

/**
 * The README's fleet walkthrough (§8): two replicas of the real app, each with its own Redis connection and its own
 * simulated backend, sharing breaker and rate-limit state through Redis under one REDIS_PREFIX. Time is the real
 * clock: the shared state runs on Redis' own clock (`TIME`), and each check takes well under the 2 s the rate
 * limit needs to refill one permit and the 10 s the breaker stays open.
 */
describe('demo fleet on Redis (two replicas, real HTTP)', () => {
  if (!RUN_REDIS_TESTS) return reportRedisUnreachable();

  const TOKEN = 'test-token';
  const auth = { Authorization: `Bearer ${TOKEN}` };
  let client: Redis | undefined;
  let prefix: string;
  let a: INestApplication;
  let b: INestApplication;
  const http = (app: INestApplication) => request(app.getHttpServer());

  async function replica(): Promise<INestApplication> {
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
      .overrideProvider(DemoConfig)
      .useValue(new DemoConfig({ ADMIN_TOKEN: TOKEN, REDIS_URL, REDIS_PREFIX: prefix }))
      .compile();
    const app = moduleRef.createNestApplication(new ExpressAdapter(), { logger: false });
    await app.init();
    return app;
  }

  beforeAll(async () => {
    client = await requireRedis();
  });
  beforeEach(async () => {
    prefix = uniquePrefix('fleet');
    [a, b] = await Promise.all([replica(), replica()]);
  });
  afterEach(async () => {
    await Promise.all([a?.close(), b?.close()]);
    if (client !== undefined) {
      const keys = await keysUnder(client, prefix);
      if (keys.length > 0) await client.del(...keys);
    }
  });
  afterAll(() => cleanUp(client, prefix));

  it('holds the 5-per-10-s limit across both replicas', async () => {
    for (const app of [a, b, a, b, a]) await http(app).get('/products').expect(200);
    const refused = await http(b).get('/products').expect(429);
    expect(refused.body).toMatchObject({ code: 'rate_limited' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    await http(a).get('/products').expect(429);
    expect(await keysUnder(client!, prefix)).toEqual([`${prefix}:{public-api}:rl`]);
  });

  it('a breaker opened through one replica refuses on the other; a reset through either closes it for both', async () => {
    await http(a).put('/backend').send({ failureRate: 1, latencyMs: 0 }).expect(200); // A's backend only
    for (let i = 0; i < 5; i++) await http(a).get('/products/anchor-01').expect(502);
    await http(a).get('/products/anchor-01').expect(503);

    // B's own backend is healthy, but B does not call it: the fleet's breaker is open.
    const refused = await http(b).get('/products/anchor-01').expect(503);
    expect(refused.body).toMatchObject({ code: 'circuit_open' });
    const health = await http(b).get('/healthz/resilience').expect(503);
    expect(health.body.inventory).toMatchObject({ status: 'down' });
    const state = await http(b).get('/resilience/state?policy=inventory').set(auth).expect(200);
    expect(state.body.state[0]).toMatchObject({ breaker: { state: 'open' } });
    expect(b.get(InventoryBackend).stats).toMatchObject({ served: 0, failed: 0 });

    await http(b).post('/resilience/policies/inventory/reset').set(auth).expect(200);
    await http(a).put('/backend').send({ failureRate: 0 }).expect(200);
    await http(a).get('/products/anchor-01').expect(200);
    await http(b).get('/healthz/resilience').expect(200);
    expect(await keysUnder(client!, prefix)).toEqual([`${prefix}:{inventory}:cb`]);
  });

  it('force-open acts on the replica it is sent to only', async () => {
    await http(a).post('/resilience/policies/checkout/force-open').set(auth).expect(200);
    const refused = await http(a).post('/orders').send({ sku: 'rope-12' }).expect(503);
    expect(refused.body).toMatchObject({ code: 'resilience_forced_open' });
    await http(b).post('/orders').send({ sku: 'rope-12' }).expect(201);
  });
});
