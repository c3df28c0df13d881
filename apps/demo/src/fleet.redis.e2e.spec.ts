import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import type { Redis } from 'ioredis';
import request from 'supertest';
import { AppModule } from './app.module';
import { DemoConfig } from './demo-config';
import { InventoryBackend } from './inventory/inventory-backend';
import { Resilience } from '@ballast/core';
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
  /** The keys of breaker, bucket and digest state (the control plane's own live under `{control}`). */
  const stateKeys = async () => (await keysUnder(client!, prefix)).filter((k) => !k.includes(':{control}:'));
  /** Polls until `check` holds, for at most 1 s (SPEC §14.1: every replica applies a change within 1 s). */
  async function withinASecond(check: () => Promise<boolean>): Promise<void> {
    const start = Date.now();
    while (!(await check())) {
      if (Date.now() - start > 1000) throw new Error('not within 1 s');
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  const orderStatus = async (app: INestApplication) =>
    (await http(app).post('/orders').send({ sku: 'rope-12' })).status;

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
    expect(await stateKeys()).toEqual([`${prefix}:{public-api}:rl`]);
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
    expect(await stateKeys()).toEqual([`${prefix}:{inventory}:cb`]);
  });

  it('force-open through one replica reaches both; scope local stays on the one; a ttl ends it on both', async () => {
    await http(a)
      .post('/resilience/policies/checkout/force-open')
      .set(auth)
      .send({ reason: 'drill' })
      .expect(200);
    await withinASecond(async () => (await orderStatus(b)) === 503);
    expect(await orderStatus(a)).toBe(503);
    await http(b).delete('/resilience/policies/checkout/force-open').set(auth).expect(200);
    await withinASecond(async () => (await orderStatus(a)) === 201);

    await http(a)
      .post('/resilience/policies/checkout/force-open')
      .set(auth)
      .send({ scope: 'local' })
      .expect(200, { policy: 'checkout', route: null, forcedOpen: true, scope: 'local' });
    expect([await orderStatus(a), await orderStatus(b)]).toEqual([503, 201]);
    await http(a)
      .delete('/resilience/policies/checkout/force-open')
      .set(auth)
      .send({ scope: 'local' })
      .expect(200);

    await http(b).post('/resilience/policies/checkout/force-open').set(auth).send({ ttl: 1500 }).expect(200);
    await withinASecond(async () => (await orderStatus(a)) === 503);
    const start = Date.now();
    while ((await orderStatus(a)) === 503 || (await orderStatus(b)) === 503) {
      if (Date.now() - start > 3000) throw new Error('the ttl did not end the force-open');
      await new Promise((r) => setTimeout(r, 50));
    }

    const audit = await http(a).get('/resilience/audit?limit=10').set(auth).expect(200);
    const trail = (
      audit.body.entries as { action: string; scope: string; actor?: string; reason?: string }[]
    ).map((e) => [e.action, e.scope, e.actor, e.reason]);
    expect(trail).toEqual([
      ['forceOpen', 'fleet', 'operator', undefined],
      ['clearForcedOpen', 'local', 'operator', undefined],
      ['forceOpen', 'local', 'operator', undefined],
      ['clearForcedOpen', 'fleet', 'operator', undefined],
      ['forceOpen', 'fleet', 'operator', 'drill'],
    ]);
    expect(JSON.stringify(audit.body)).not.toContain(TOKEN);
    const replicas = await http(b).get('/resilience/replicas').set(auth).expect(200);
    expect(replicas.body.replicas).toHaveLength(2);
  });

  it('a retune through one replica reaches both, and If-Match makes it compare-and-set', async () => {
    const spec = (permits: number) => ({ strategies: [{ type: 'rateLimit', permits, per: '10s' }] });
    const first = await http(a)
      .put('/resilience/policies/public-api')
      .set(auth)
      .set('If-Match', '0')
      .send(spec(50))
      .expect(200);
    expect(first.body).toMatchObject({ policy: 'public-api', version: 1 });
    const stale = await http(b)
      .put('/resilience/policies/public-api')
      .set(auth)
      .set('If-Match', '0')
      .send(spec(7))
      .expect(409);
    expect(stale.body).toMatchObject({ code: 'version_conflict', version: 1 });
    await withinASecond(
      async () => b.get(Resilience).policy('public-api')?.rateLimit?.options.permits === 50,
    );
    await http(b)
      .put('/resilience/policies/public-api')
      .set(auth)
      .set('If-Match', '"1"')
      .send(spec(9))
      .expect(200);
    await withinASecond(async () => a.get(Resilience).policy('public-api')?.rateLimit?.options.permits === 9);
  });
});
