import 'reflect-metadata';
import { Controller, Get, Global, Module, type INestApplication } from '@nestjs/common';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import {
  AdaptiveThrottleStrategy,
  BackoffStrategy,
  BulkheadStrategy,
  CircuitBreakerStrategy,
  HedgeStrategy,
  RateLimitStrategy,
  Resilience,
  ResiliencePolicy,
  RetryStrategy,
  type RateLimitStore,
} from '@ballast/core';
import { MetricName, PROMETHEUS_NAMES } from '@ballast/opentelemetry';
import { MetricsModule } from './metrics';

const infraError = () => Object.assign(new Error('upstream reset'), { code: 'ECONNRESET' });
const redisDown = () => Promise.reject(new Error('redis down'));

/** Stands in for ResilienceModule.forRoot: a global `Resilience` whose policies exercise every instrument. */
function resilienceModule(resilience: Resilience) {
  @Global()
  @Module({ providers: [{ provide: Resilience, useValue: resilience }], exports: [Resilience] })
  class TestResilienceModule {}
  return TestResilienceModule;
}

@Controller('work')
class WorkController {
  #attempts = 0;
  constructor(private readonly resilience: Resilience) {}

  @Get('orders')
  async orders(): Promise<string> {
    // fails once, then succeeds: one retry
    return this.resilience.run(() => (this.#attempts++ === 0 ? Promise.reject(infraError()) : 'ok'), {
      policy: 'orders',
      route: 'db',
    });
  }

  @Get('search')
  async search(): Promise<string> {
    return this.resilience
      .run(() => Promise.reject(infraError()), { policy: 'search' })
      .catch((e: Error & { code?: string }) => e.code ?? 'failed');
  }
}

function buildResilience(): Resilience {
  const failingRateStore: RateLimitStore = { take: redisDown, tokens: redisDown, reset: redisDown };
  return new Resilience({
    policies: [
      new ResiliencePolicy({
        name: 'orders',
        strategies: [
          new RateLimitStrategy({ permits: 100, per: '1m' }),
          new BulkheadStrategy({ maxConcurrency: 4 }),
          new CircuitBreakerStrategy({
            failureRatio: 0.9,
            samplingWindow: '10s',
            minThroughput: 20,
            breakDuration: '5s',
          }),
          new RetryStrategy({
            maxAttempts: 2,
            backoff: new BackoffStrategy({ base: '1ms', max: '1ms', jitter: 'none' }),
          }),
        ],
        hedge: new HedgeStrategy({ delay: '250ms', maxAttempts: 2 }),
      }),
      new ResiliencePolicy({
        name: 'search',
        strategies: [new AdaptiveThrottleStrategy({ k: 1, minThroughput: 2 })],
      }),
    ],
    stores: { rateLimit: failingRateStore },
    // the throttle sheds whenever its probability is above 0: deterministic rejections
    random: () => 0,
  });
}

describe.each(['express', 'fastify'] as const)('demo GET /metrics (%s)', (platform) => {
  let app: INestApplication;
  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [resilienceModule(buildResilience()), MetricsModule],
      controllers: [WorkController],
    }).compile();
    if (platform === 'fastify') {
      app = moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter(), { logger: false });
      await app.init();
      await (app as NestFastifyApplication).getHttpAdapter().getInstance().ready();
    } else {
      app = moduleRef.createNestApplication({ logger: false });
      await app.init();
    }
  });
  afterAll(async () => {
    await app.close();
  });

  it('serves the Prometheus text format with every instrument after some calls', async () => {
    const server = app.getHttpServer();
    const before = await request(server).get('/metrics').expect(200);
    expect(before.text).not.toContain('ballast_calls_total{');

    for (let i = 0; i < 3; i++) await request(server).get('/work/orders').expect(200);
    for (let i = 0; i < 6; i++) await request(server).get('/work/search').expect(200);
    // An operator action, for ballast.control.applied.
    await app.get(Resilience).admin.forceOpen('search', 'elsewhere', { scope: 'local' });
    // A chaos injection, for ballast.chaos.injected (a route of its own: the throttle of the default one sheds).
    await app
      .get(Resilience)
      .admin.setChaos('search', { enabled: true, outcome: { rate: 1, value: 'chaos' } });
    await expect(app.get(Resilience).run(() => 'real', { policy: 'search', route: 'chaos' })).resolves.toBe(
      'chaos',
    );

    const res = await request(server).get('/metrics').expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    const names = new Set(
      res.text
        .split('\n')
        .filter((l) => l !== '' && !l.startsWith('#'))
        .map((l) => /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(l)![0]),
    );
    const missing = Object.values(MetricName).flatMap((m) =>
      PROMETHEUS_NAMES[m].filter((n) => !names.has(n)),
    );
    expect(missing).toEqual([]);
    expect(res.text).toMatch(
      /ballast_calls_total\{ballast_policy="orders",ballast_route="db",ballast_outcome="success"[^}]*\} 3/,
    );
    expect(res.text).toMatch(/ballast_retries_total\{ballast_policy="orders",ballast_route="db"[^}]*\} 1/);
    expect(res.text).toMatch(
      /ballast_rejections_total\{ballast_policy="search",ballast_code="adaptive_throttle"/,
    );
    expect(res.text).toMatch(/ballast_store_degraded_total\{[^}]*ballast_store="rateLimit"/);
  });
});
