import 'reflect-metadata';
import { Controller, Get, Injectable, Module, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Resilience, ResiliencePolicy, currentSignal, type PolicySpec } from '@ballast/core';
import { FakeClock } from '@ballast/testing';
import request from 'supertest';
import { ADAPTERS, bootApp } from './__tests__/harness';
import {
  ResilienceHealthIndicator,
  ResilienceModule,
  Resilient,
  type ResilienceModuleOptions,
} from './index';

/** Stands in for an application's config service (e.g. @nestjs/config) holding policies as JSON. */
@Injectable()
class AppConfig {
  readonly clock = new FakeClock();
  readonly policies: PolicySpec[] = [
    { name: 'catalog', strategies: [{ type: 'rateLimit', permits: 1, per: '1m' }] },
    {
      name: 'inventory',
      strategies: [
        {
          type: 'circuitBreaker',
          failureRatio: 0.5,
          samplingWindow: '10s',
          minThroughput: 2,
          breakDuration: '5s',
        },
      ],
    },
  ];
}

@Module({ providers: [AppConfig], exports: [AppConfig] })
class ConfigModule {}

@Injectable()
class ResilienceConfigService {
  constructor(private readonly config: AppConfig) {}
  createResilienceOptions(): ResilienceModuleOptions {
    return {
      policies: this.config.policies,
      clock: this.config.clock,
      headers: { criticality: 'x-criticality' },
    };
  }
}

@Controller()
class CatalogController {
  @Get('products')
  @Resilient('catalog')
  products(): string[] {
    return ['anchor'];
  }
}

describe.each(ADAPTERS)('ResilienceModule (%s)', (adapter) => {
  it('forRootAsync builds the Resilience from a config factory with JSON policy specs', async () => {
    const app = await bootApp(adapter, {
      imports: [
        ResilienceModule.forRootAsync({
          imports: [ConfigModule],
          inject: [AppConfig],
          useFactory: (config: AppConfig) => ({ policies: config.policies, clock: config.clock }),
        }),
      ],
      controllers: [CatalogController],
    });
    try {
      await request(app.getHttpServer()).get('/products').expect(200, ['anchor']);
      await request(app.getHttpServer()).get('/products').expect(429);
      const resilience = app.get(Resilience);
      expect(resilience.clock).toBe(app.get(AppConfig, { strict: false }).clock);
      expect(await resilience.admin.policies()).toEqual(expect.arrayContaining(['catalog', 'inventory']));
    } finally {
      await app.close();
    }
  });

  it('forRootAsync accepts an options class (useClass)', async () => {
    const app = await bootApp(adapter, {
      imports: [
        ResilienceModule.forRootAsync({ imports: [ConfigModule], useClass: ResilienceConfigService }),
      ],
      controllers: [CatalogController],
    });
    try {
      await request(app.getHttpServer()).get('/products').expect(200);
      expect(app.get(Resilience).policy('catalog')?.rateLimit?.options.permits).toBe(1);
    } finally {
      await app.close();
    }
  });
});

describe('ResilienceModule.forRoot', () => {
  async function compile(options: ResilienceModuleOptions, extra: { imports?: unknown[] } = {}) {
    return Test.createTestingModule({
      imports: [ResilienceModule.forRoot(options), ...((extra.imports ?? []) as [])],
    }).compile();
  }

  it('provides one Resilience, injectable by its class from any module (global)', async () => {
    @Injectable()
    class Consumer {
      constructor(readonly resilience: Resilience) {}
    }
    @Module({ providers: [Consumer], exports: [Consumer] })
    class FeatureModule {}

    const moduleRef = await compile(
      { policies: [new ResiliencePolicy({ name: 'p', strategies: [] })] },
      {
        imports: [FeatureModule],
      },
    );
    expect(moduleRef.get(Consumer).resilience).toBe(moduleRef.get(Resilience));
    expect(moduleRef.get(Resilience).policy('p')).toBeDefined();
    await moduleRef.close();
  });

  it('reports an invalid JSON spec at bootstrap with its path', async () => {
    const error = await compile({
      policies: [{ name: 'bad', strategies: [{ type: 'timeout', timeout: -1 }] }],
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'configuration', code: 'invalid_policy' });
    expect((error as Error).message).toContain('strategies[0].timeout');
  });

  it('reports every invalid option in one configuration error: each bad policy, headers, core options', async () => {
    const error = await compile({
      policies: [
        { name: 'a', strategies: [{ type: 'timeout', timeout: -1 }] },
        new ResiliencePolicy({ name: 'fine', strategies: [] }),
        { name: 'b', strategies: [{ type: 'rateLimit', permits: 0, per: '1s' }] },
      ],
      headers: { deadline: 5 as never, criticality: 'x criticality' },
      maxKeysPerPolicy: 0,
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'configuration', code: 'invalid_policy' });
    const message = (error as Error).message;
    expect(message).toMatch(/^Invalid ResilienceModule options: policies\[0\]: .*strategies\[0\]\.timeout/);
    expect(message).toMatch(/policies\[2\]: .*strategies\[0\]\.permits/);
    expect(message).toContain("headers.deadline must be a header name (e.g. 'x-deadline'), got 5");
    expect(message).toContain(
      "headers.criticality must be a header name (e.g. 'x-criticality'), got 'x criticality'",
    );
    expect(message).toContain('maxKeysPerPolicy must be an integer ≥ 1, got 0');
    expect((error as { details: { violations: string[] } }).details.violations).toHaveLength(5);
  });

  it('disposes the Resilience on application shutdown (listeners are dropped)', async () => {
    const moduleRef = await compile({ policies: [new ResiliencePolicy({ name: 'p', strategies: [] })] });
    const app: INestApplication = moduleRef.createNestApplication({ logger: false });
    await app.init();
    const resilience = app.get(Resilience);
    const seen: string[] = [];
    resilience.on((e) => seen.push(e.type));
    await resilience.run(() => 1, { policy: 'p' });
    expect(seen).toEqual(['call']);
    await app.close();
    await resilience.run(() => 1, { policy: 'p' });
    expect(seen).toEqual(['call']);
  });
});

describe('ResilienceHealthIndicator', () => {
  it('reports breaker states in the terminus result shape: up, then down while open or forced open', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({
          clock: new FakeClock(),
          policies: [
            {
              name: 'inventory',
              strategies: [
                {
                  type: 'circuitBreaker',
                  failureRatio: 0.5,
                  samplingWindow: '10s',
                  minThroughput: 1,
                  breakDuration: '5s',
                },
              ],
            },
            { name: 'payments', strategies: [] },
          ],
        }),
      ],
    }).compile();
    const health = moduleRef.get(ResilienceHealthIndicator);
    const resilience = moduleRef.get(Resilience);
    await resilience.run(() => 'ok', { policy: 'inventory' });
    expect(await health.isHealthy()).toEqual({
      resilience: {
        status: 'up',
        breakers: [{ policy: 'inventory', route: null, state: 'closed', forcedOpen: false }],
      },
    });
    await resilience
      .run(() => Promise.reject(Object.assign(new Error('down'), { code: 'ECONNREFUSED' })), {
        policy: 'inventory',
      })
      .catch(() => {});
    expect(await health.isHealthy('deps')).toEqual({
      deps: {
        status: 'down',
        breakers: [{ policy: 'inventory', route: null, state: 'open', forcedOpen: false }],
      },
    });
    await resilience.admin.forceOpen('payments', 'eu');
    const onlyPayments = await health.isHealthy('payments', { policies: ['payments'] });
    expect(onlyPayments).toEqual({
      payments: {
        status: 'down',
        breakers: [{ policy: 'payments', route: 'eu', state: 'closed', forcedOpen: true }],
      },
    });
    await moduleRef.close();
  });
});

describe('ResilienceModule ambientContext option', () => {
  it.each([
    [undefined, true],
    [false, false],
  ])('ambientContext %s → currentSignal() inside a run is set: %s', async (ambientContext, expected) => {
    const moduleRef = await Test.createTestingModule({
      imports: [ResilienceModule.forRoot(ambientContext === undefined ? {} : { ambientContext })],
    }).compile();
    const resilience = moduleRef.get(Resilience);
    const seen = await resilience.run(() => currentSignal(), { policy: 'transient' });
    expect(seen instanceof AbortSignal).toBe(expected);
    await moduleRef.close();
  });
});
