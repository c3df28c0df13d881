import 'reflect-metadata';
import { Controller, Get, Module, type INestApplication } from '@nestjs/common';
import {
  RateLimitStrategy,
  Resilience,
  ResiliencePolicy,
  currentCriticality,
  type ResilienceEvent,
} from '@ballast/core';
import { FakeClock } from '@ballast/testing';
import request from 'supertest';
import { ADAPTERS, bootApp } from './__tests__/harness';
import { httpTestModule } from './__tests__/fixtures';
import { Criticality, ResilienceInterceptor, ResilienceModule, Resilient } from './index';

/** A controller in a module of its own that does not import ResilienceModule (it is global). */
@Controller('feature')
class FeatureController {
  @Get('limited')
  @Resilient('feature-limit')
  limited(): { ok: true } {
    return { ok: true };
  }
}
@Module({ controllers: [FeatureController] })
class FeatureModule {}

@Controller('u')
class UndecoratedController {
  @Get()
  level(): { criticality: number } {
    return { criticality: currentCriticality() };
  }
}

/**
 * On Node 20 Nest's interceptor step alone costs more than a policy (≈ 30 µs per request), so no route pays it
 * because of Ballast: decorated HTTP handlers are wrapped at bootstrap and run their policy themselves, and
 * undecorated routes are left alone. Only the `headers` option, which concerns every route, adds a global
 * registration of the interceptor (which then lets wrapped handlers pass).
 */
describe.each(ADAPTERS)("decorated routes skip Nest's interceptor step (%s)", (adapter) => {
  let intercepts: jest.SpiedFunction<ResilienceInterceptor['intercept']>;
  let app: INestApplication | undefined;
  let events: ResilienceEvent[];

  beforeEach(() => {
    intercepts = jest.spyOn(ResilienceInterceptor.prototype, 'intercept');
    events = [];
  });
  afterEach(async () => {
    intercepts.mockRestore();
    await app?.close();
    app = undefined;
  });

  async function boot(options: Parameters<typeof httpTestModule>[1] = {}): Promise<INestApplication> {
    app = await bootApp(adapter, httpTestModule(new FakeClock(), options));
    app.get(Resilience).on((e) => events.push(e));
    return app;
  }
  const calls = () => events.filter((e) => e.type === 'call').map((e) => [e.policy, e.route]);

  it('never runs an undecorated route through the interceptor', async () => {
    const server = (await boot()).getHttpServer();
    await request(server).get('/m/undecorated').expect(200, { ok: true });
    await request(server).get('/m/context-undecorated').expect(200, { criticality: 2, remaining: null });
    expect(intercepts).not.toHaveBeenCalled();
    await request(server).get('/m/limited').expect(200);
    // the decorated route ran its policy without entering the interceptor either
    expect(intercepts).not.toHaveBeenCalled();
    expect(calls()).toEqual([['limited', undefined]]);
  });

  it('runs the policy once when the class and the method both carry a decorator', async () => {
    const server = (await boot()).getHttpServer();
    // /c/overrides carries @Resilient on the class and on the method: the method's wins, one run
    await request(server).get('/c/overrides').expect(200);
    await request(server).get('/c/inherits').expect(200);
    expect(intercepts).not.toHaveBeenCalled();
    expect(calls()).toEqual([
      ['plain', undefined],
      ['limited', 'class'],
    ]);
    // one request is one rate-limit token: 'limited' allows 2 per minute, so the second inherits call is the last
    await request(server).get('/c/inherits').expect(200);
    await request(server).get('/c/inherits').expect(429);
  });

  it('binds the @Criticality level beside @Resilient in one run', async () => {
    const server = (await boot()).getHttpServer();
    // /m/context carries @Resilient('plain') and @Criticality(CRITICAL): two entries, one run
    await request(server).get('/m/context').expect(200, { criticality: 3, remaining: null });
    expect(calls()).toEqual([['plain', undefined]]);
  });

  it('with the headers option, every route runs through it once, decorated routes included', async () => {
    const server = (
      await boot({ headers: { criticality: 'x-criticality', deadline: 'x-deadline-budget-ms' } })
    ).getHttpServer();
    await request(server)
      .get('/m/context-undecorated')
      .set('x-criticality', 'BEST_EFFORT')
      .expect(200, { criticality: 0, remaining: null });
    expect(intercepts).toHaveBeenCalledTimes(1);
    expect(calls()).toEqual([]);
    await request(server).get('/m/limited').set('x-criticality', 'CRITICAL').expect(200);
    expect(calls()).toEqual([['limited', undefined]]);
  });

  it('works for a controller whose module does not import ResilienceModule', async () => {
    app = await bootApp(adapter, {
      imports: [
        ResilienceModule.forRoot({
          policies: [
            new ResiliencePolicy({
              name: 'feature-limit',
              strategies: [new RateLimitStrategy({ permits: 1, per: '1m' })],
            }),
          ],
        }),
        FeatureModule,
      ],
    });
    const server = app.getHttpServer();
    await request(server).get('/feature/limited').expect(200, { ok: true });
    const refused = await request(server).get('/feature/limited').expect(429);
    expect(refused.body).toMatchObject({ code: 'rate_limited' });
  });
});

describe('the headers option through forRootAsync', () => {
  it.each(ADAPTERS)(
    'registers the global interceptor when the factory names a header (%s)',
    async (adapter) => {
      const app = await bootApp(adapter, {
        imports: [
          ResilienceModule.forRootAsync({
            useFactory: async () => ({ headers: { criticality: 'x-criticality' } }),
          }),
        ],
        controllers: [UndecoratedController],
      });
      try {
        await request(app.getHttpServer())
          .get('/u')
          .set('x-criticality', 'degraded')
          .expect(200, { criticality: Criticality.DEGRADED });
      } finally {
        await app.close();
      }
    },
  );
});
