import 'reflect-metadata';
import { Controller, Get, ServiceUnavailableException, type INestApplication } from '@nestjs/common';
import { CircuitBreakerStrategy, Resilience, ResiliencePolicy, isResilienceError } from '@ballast/core';
import { FakeClock } from '@ballast/testing';
import request from 'supertest';
import { ADAPTERS, bootApp } from './__tests__/harness';
import {
  ResilienceAdminModule,
  ResilienceHealthIndicator,
  ResilienceModule,
  type ResilienceHealthResult,
} from './index';

const breaker = (): CircuitBreakerStrategy =>
  new CircuitBreakerStrategy({
    failureRatio: 0.5,
    samplingWindow: '10s',
    minThroughput: 1,
    breakDuration: '5s',
  });

/** What the README tells users without terminus to write: answer 503 while the indicator says down. */
@Controller('health')
class HealthController {
  constructor(private readonly health: ResilienceHealthIndicator) {}

  @Get()
  async check(): Promise<ResilienceHealthResult<'deps'>> {
    const result = await this.health.isHealthy('deps', { policies: ['inventory', 'payments'] });
    if (result.deps.status === 'down') throw new ServiceUnavailableException(result);
    return result;
  }
}

async function boot(adapter: (typeof ADAPTERS)[number]): Promise<INestApplication> {
  return bootApp(adapter, {
    imports: [
      ResilienceModule.forRoot({
        clock: new FakeClock(),
        policies: [
          new ResiliencePolicy({ name: 'inventory', strategies: [breaker()] }),
          new ResiliencePolicy({ name: 'payments', strategies: [] }),
          new ResiliencePolicy({ name: 'search', strategies: [breaker()] }),
        ],
      }),
      ResilienceAdminModule.forRoot({ unsafeAllowAnonymous: true }),
    ],
    controllers: [HealthController],
  });
}

describe.each(ADAPTERS)('ResilienceHealthIndicator over HTTP (%s)', (adapter) => {
  let app: INestApplication;
  const http = () => request(app.getHttpServer());

  beforeEach(async () => {
    app = await boot(adapter);
  });
  afterEach(async () => {
    await app.close();
  });

  it('a route-less force-open before any traffic makes the policy down (breaker or not), until cleared', async () => {
    await http()
      .get('/health')
      .expect(200, { deps: { status: 'up', breakers: [] } });
    for (const policy of ['inventory', 'payments']) {
      await http().post(`/resilience/policies/${policy}/force-open`).expect(200);
      const down = await http().get('/health').expect(503);
      expect(down.body).toEqual({
        deps: { status: 'down', breakers: [{ policy, route: null, state: 'closed', forcedOpen: true }] },
      });
      await http().delete(`/resilience/policies/${policy}/force-open`).expect(200);
      await http()
        .get('/health')
        .expect(200, { deps: { status: 'up', breakers: [] } });
    }
  });

  it('a route-less force-open after traffic marks every route of the policy forced', async () => {
    const resilience = app.get(Resilience);
    await resilience.run(() => 'ok', { policy: 'inventory', route: 'eu' });
    await resilience.run(() => 'ok', { policy: 'inventory', route: 'us' });
    await http().post('/resilience/policies/inventory/force-open').expect(200);
    const down = await http().get('/health').expect(503);
    expect(down.body.deps.breakers).toEqual(
      expect.arrayContaining([
        { policy: 'inventory', route: 'eu', state: 'closed', forcedOpen: true },
        { policy: 'inventory', route: 'us', state: 'closed', forcedOpen: true },
      ]),
    );
  });

  it('an uncounted policy forced open leaves the check up', async () => {
    await http().post('/resilience/policies/search/force-open').expect(200);
    await http()
      .get('/health')
      .expect(200, { deps: { status: 'up', breakers: [] } });
  });
});

describe('ResilienceHealthIndicator options', () => {
  it('rejects an unknown name in `policies` (a typo would otherwise be up forever)', async () => {
    const app = await boot('express');
    try {
      const health = app.get(ResilienceHealthIndicator);
      await app.get(Resilience).admin.forceOpen('inventory');
      let error: unknown;
      try {
        await health.isHealthy('deps', { policies: ['inventroy'] });
      } catch (e) {
        error = e;
      }
      expect(isResilienceError(error) && error.code).toBe('unknown_policy');
      expect((error as Error).message).toContain("'inventroy'");
    } finally {
      await app.close();
    }
  });

  it('answers in the result shape terminus ≥ 11 reads: one key, status up | down, never a throw', async () => {
    const app = await boot('fastify');
    try {
      const health = app.get(ResilienceHealthIndicator);
      await app.get(Resilience).admin.forceOpen('payments', 'eu');
      const result = await health.isHealthy('payments', { policies: ['payments'] });
      expect(Object.keys(result)).toEqual(['payments']);
      expect(result.payments).toEqual({
        status: 'down',
        breakers: [{ policy: 'payments', route: 'eu', state: 'closed', forcedOpen: true }],
      });
    } finally {
      await app.close();
    }
  });
});
