import 'reflect-metadata';
import { Controller, Get, type INestApplication } from '@nestjs/common';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { CircuitBreakerStrategy, Resilience, ResiliencePolicy } from '@ballast/core';
import { FakeClock } from '@ballast/testing';
import request from 'supertest';
import { ADAPTERS, bootApp } from './__tests__/harness';
import { ResilienceHealthIndicator, ResilienceModule } from './index';

/** The README's terminus example, as written there. */
@Controller('health')
class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly resilience: ResilienceHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.resilience.isHealthy('inventory', { policies: ['inventory'] })]);
  }
}

/** `ResilienceHealthIndicator` under the real `@nestjs/terminus` (11, the Nest 11 line): its result drives 200/503. */
describe.each(ADAPTERS)('ResilienceHealthIndicator with @nestjs/terminus (%s)', (adapter) => {
  let app: INestApplication;

  beforeEach(async () => {
    app = await bootApp(adapter, {
      imports: [
        TerminusModule.forRoot({ logger: false }),
        ResilienceModule.forRoot({
          clock: new FakeClock(),
          policies: [
            new ResiliencePolicy({
              name: 'inventory',
              strategies: [
                new CircuitBreakerStrategy({
                  failureRatio: 0.5,
                  samplingWindow: '10s',
                  minThroughput: 1,
                  breakDuration: '5s',
                }),
              ],
            }),
          ],
        }),
      ],
      controllers: [HealthController],
    });
  });
  afterEach(async () => {
    await app.close();
  });

  it('answers 200 while the breaker is closed and 503 with the breaker while it is open', async () => {
    const up = await request(app.getHttpServer()).get('/health').expect(200);
    expect(up.body).toMatchObject({ status: 'ok', info: { inventory: { status: 'up' } } });

    const resilience = app.get(Resilience);
    await resilience.admin.forceOpen('inventory');
    const down = await request(app.getHttpServer()).get('/health').expect(503);
    expect(down.body).toMatchObject({
      status: 'error',
      error: {
        inventory: {
          status: 'down',
          breakers: [{ policy: 'inventory', route: null, forcedOpen: true }],
        },
      },
    });

    await resilience.admin.clearForcedOpen('inventory');
    await request(app.getHttpServer()).get('/health').expect(200);
  });
});
