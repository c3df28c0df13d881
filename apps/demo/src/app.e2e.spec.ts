import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { FakeClock } from '@ballast/testing';
import request from 'supertest';
import { AppModule } from './app.module';
import { DEMO_CLOCK, DEMO_RANDOM, DemoConfig } from './demo-config';
import { InventoryBackend } from './inventory/inventory-backend';

const TOKEN = 'test-token';
const auth = { Authorization: `Bearer ${TOKEN}` };
const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Advances the fake clock in small steps, letting real socket I/O run between steps, until `promise` settles. */
async function pump<T>(clock: FakeClock, promise: Promise<T>, step = 10): Promise<T> {
  let settled = false;
  void promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let i = 0; i < 5_000 && !settled; i++) {
    await clock.advance(step);
    await tick();
  }
  return promise;
}

async function eventually(predicate: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 10_000; i++) {
    if (await predicate()) return;
    await tick();
  }
  throw new Error('condition never held');
}

describe.each(['express', 'fastify'] as const)('demo app (real HTTP, %s)', (adapter) => {
  let app: INestApplication;
  let clock: FakeClock;
  /** Values the backend draws for "slow path?" and "fail?"; 0.9 (fast, healthy) once exhausted. */
  let draws: number[];
  const http = () => request(app.getHttpServer());

  beforeEach(async () => {
    clock = new FakeClock();
    draws = [];
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
      .overrideProvider(DEMO_CLOCK)
      .useValue(clock)
      .overrideProvider(DEMO_RANDOM)
      .useValue(() => draws.shift() ?? 0.9)
      .overrideProvider(DemoConfig)
      .useValue(new DemoConfig({ ADMIN_TOKEN: TOKEN }))
      .compile();
    app = moduleRef.createNestApplication(
      adapter === 'express' ? new ExpressAdapter() : new FastifyAdapter(),
      {
        logger: false,
      },
    );
    await app.init();
    if (adapter === 'fastify')
      await (app.getHttpAdapter().getInstance() as { ready(): Promise<unknown> }).ready();
  });
  afterEach(async () => {
    await app.close();
  });

  it('answers /healthz', async () => {
    const res = await http().get('/healthz').expect(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('rate limits the public listing: 5 per 10 s, then 429 with Retry-After', async () => {
    for (let i = 0; i < 5; i++) await http().get('/products').expect(200);
    const res = await http().get('/products').expect(429);
    expect(res.body).toMatchObject({ code: 'rate_limited' });
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    await clock.advance(2000); // one token every 2 s
    await http().get('/products').expect(200);
  });

  it('opens the inventory breaker when the backend fails, reports it, and recovers', async () => {
    await http().put('/backend').send({ failureRate: 1, latencyMs: 0 }).expect(200);
    for (let i = 0; i < 5; i++) {
      const res = await pump(clock, Promise.resolve(http().get('/products/anchor-01')));
      expect(res.status).toBe(502); // the backend's own error, passed through (after one retry)
    }
    const open = await http().get('/products/anchor-01').expect(503);
    expect(open.body).toMatchObject({ code: 'circuit_open' });
    const health = await http().get('/healthz/resilience').expect(503);
    expect(health.body.inventory).toMatchObject({ status: 'down' });

    await http().put('/backend').send({ failureRate: 0 }).expect(200);
    await clock.advance(10_000); // break duration
    const recovered = await pump(clock, Promise.resolve(http().get('/products/anchor-01')));
    expect(recovered.status).toBe(200);
    expect(recovered.body).toMatchObject({ sku: 'anchor-01', stock: expect.any(Number) });
    await http().get('/healthz/resilience').expect(200);
  });

  it('hedges a slow stock read: the second attempt answers and the first is cancelled', async () => {
    await http().put('/backend').send({ slowRate: 0.5 }).expect(200);
    draws = [0]; // first attempt takes the 1.5 s slow path; the hedge (after 100 ms) is fast
    const res = await pump(clock, Promise.resolve(http().get('/products/fender-xl/stock')), 5);
    expect(res.status).toBe(200);
    expect(res.body.tookMs).toBeLessThan(200);
    const backend = app.get(InventoryBackend);
    await eventually(() => backend.stats.cancelled === 1);
    expect(backend.stats).toMatchObject({ served: 1, cancelled: 1, inFlight: 0 });
  });

  it('sheds checkout load with the bulkhead: 2 in flight, 4 queued, the rest refused', async () => {
    const orders = Array.from({ length: 8 }, () =>
      Promise.resolve(http().post('/orders').send({ sku: 'rope-12', quantity: 1 })),
    );
    await eventually(async () => {
      const { body } = await http().get('/resilience/state?policy=checkout').set(auth);
      return body.state[0]?.inUse === 2 && body.state[0]?.waiting === 4;
    });
    const all = pump(clock, Promise.all(orders), 50);
    const statuses = (await all).map((r) => r.status).sort();
    expect(statuses).toEqual([201, 201, 201, 201, 201, 201, 503, 503]);
    const refused = (await all).find((r) => r.status === 503)!;
    expect(refused.body).toMatchObject({ code: 'bulkhead_full' });
  });

  it('guards the admin API with the token, and force-opens / clears a policy', async () => {
    await http().post('/resilience/policies/checkout/force-open').expect(403);
    await http().post('/resilience/policies/checkout/force-open').set(auth).expect(200);
    const refused = await http().post('/orders').send({ sku: 'rope-12' }).expect(503);
    expect(refused.body).toMatchObject({ code: 'resilience_forced_open' });
    await http().delete('/resilience/policies/checkout/force-open').set(auth).expect(200);
    const placed = pump(clock, Promise.resolve(http().post('/orders').send({ sku: 'rope-12' })));
    expect((await placed).status).toBe(201);
  });

  it('retunes a policy over HTTP, and rejects an invalid spec with its JSON path', async () => {
    const bad = await http()
      .put('/resilience/policies/public-api')
      .set(auth)
      .send({ strategies: [{ type: 'rateLimit', permits: 0, per: '10s' }] })
      .expect(400);
    expect(bad.body.message).toContain('strategies[0].permits');
    await http()
      .put('/resilience/policies/public-api')
      .set(auth)
      .send({ strategies: [{ type: 'rateLimit', permits: 50, per: '10s' }] })
      .expect(200);
    for (let i = 0; i < 20; i++) await http().get('/products').expect(200);
  });

  it('a chaos drill switched on over HTTP stalls the stock reads past their timeout, until the breaker opens', async () => {
    await http()
      .put('/resilience/policies/inventory/chaos')
      .set(auth)
      .send({ enabled: true, latency: { rate: 1, delay: '800ms' }, reason: 'drill' })
      .expect(200);
    const codes: string[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await pump(clock, Promise.resolve(http().get('/products/anchor-01')));
      codes.push(`${res.status} ${res.body.code}`);
    }
    expect(codes).toEqual([...Array(5).fill('504 attempt_timeout'), '503 circuit_open']);
    expect(app.get(InventoryBackend).stats.served).toBe(0); // the injected wait ended each attempt first
    await http().put('/resilience/policies/inventory/chaos').set(auth).send({ enabled: false }).expect(200);
    await http().post('/resilience/policies/inventory/reset').set(auth).expect(200);
    const ok = await pump(clock, Promise.resolve(http().get('/products/anchor-01')));
    expect(ok.status).toBe(200);
  });

  it('a policy put in shadow mode over HTTP answers every call, and reports what it would refuse', async () => {
    await http().put('/resilience/policies/public-api/mode').set(auth).send({ mode: 'shadow' }).expect(200);
    for (let i = 0; i < 8; i++) await http().get('/products').expect(200); // 5 per 10 s when enforced
    const { body } = await http().get('/resilience/state?policy=public-api').set(auth).expect(200);
    expect(body.state[0]).toMatchObject({ mode: 'shadow' });
    await http().put('/resilience/policies/public-api/mode').set(auth).send({ mode: 'enforce' }).expect(200);
    await http().get('/products').expect(429);
  });

  it('honours the deadline header: 504 when the budget runs out before the backend answers', async () => {
    await http().put('/backend').send({ latencyMs: 200 }).expect(200);
    const res = await pump(
      clock,
      Promise.resolve(http().get('/products/anchor-01').set('x-deadline-budget-ms', '50')),
    );
    expect(res.status).toBe(504);
    expect(res.body).toMatchObject({ code: 'deadline_exceeded' });
  });

  it('validates the backend knobs', async () => {
    const res = await http().put('/backend').send({ failureRate: 2, bogus: 1 }).expect(400);
    expect(res.body.message).toEqual([
      'failureRate: must be a number in [0, 1], got 2',
      expect.stringContaining('bogus: unknown knob'),
    ]);
  });
});
