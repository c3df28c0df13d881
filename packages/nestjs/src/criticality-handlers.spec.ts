import 'reflect-metadata';
import { Controller, Get, type INestApplication } from '@nestjs/common';
import { Resilience, ResiliencePolicy, currentCriticality, remainingTime } from '@ballast/core';
import { FakeClock } from '@ballast/testing';
import { map, of, type Observable } from 'rxjs';
import request from 'supertest';
import { ADAPTERS, bootApp } from './__tests__/harness';
import { Criticality, ResilienceInterceptor, ResilienceModule } from './index';

/** A wrapped HTTP handler with a level and no policy: the wrapper binds the scope and runs the handler bare. */
@Controller('level')
class CriticalityOnlyController {
  constructor(private readonly resilience: Resilience) {}

  /** No policy: only a level, which the handler's own calls must see after an await. */
  @Get('promise')
  @Criticality('CRITICAL')
  async promise(): Promise<{ level: number | undefined; inRun: number | undefined; budget: boolean }> {
    await Promise.resolve();
    const inRun = await this.resilience.run(() => currentCriticality(), { policy: 'plain' });
    return { level: currentCriticality(), inRun, budget: remainingTime() !== undefined };
  }

  @Get('observable')
  @Criticality('BEST_EFFORT')
  observable(): Observable<{ level: number | undefined; budget: number | undefined }> {
    return of(0).pipe(map(() => ({ level: currentCriticality(), budget: remainingTime() })));
  }
}

describe.each(ADAPTERS)('a handler with @Criticality and no policy (%s)', (adapter) => {
  let app: INestApplication | undefined;
  let intercepts: jest.SpiedFunction<ResilienceInterceptor['intercept']>;
  /** `headers`: the module reads the budget and criticality headers, which puts its interceptor on every route. */
  const boot = async (headers: boolean): Promise<void> => {
    app = await bootApp(adapter, {
      imports: [
        ResilienceModule.forRoot({
          clock: new FakeClock(),
          ...(headers ? { headers: { deadline: 'x-budget-ms', criticality: 'x-criticality' } } : {}),
          policies: [new ResiliencePolicy({ name: 'plain', strategies: [] })],
        }),
      ],
      controllers: [CriticalityOnlyController],
    });
  };
  beforeEach(() => {
    intercepts = jest.spyOn(ResilienceInterceptor.prototype, 'intercept');
  });
  afterEach(async () => {
    intercepts.mockRestore();
    await app?.close();
    app = undefined;
  });
  const server = () => app!.getHttpServer();

  it('binds its level around the handler and its own calls, through the wrapper, not an interceptor', async () => {
    await boot(false);
    const res = await request(server()).get('/level/promise').expect(200);
    expect(res.body).toEqual({ level: Criticality.CRITICAL, inRun: Criticality.CRITICAL, budget: false });
    const obs = await request(server()).get('/level/observable').expect(200);
    expect(obs.body).toEqual({ level: Criticality.BEST_EFFORT });
    expect(intercepts).not.toHaveBeenCalled();
  });

  it('a criticality header overrides the level; a budget header binds the deadline', async () => {
    await boot(true);
    const res = await request(server())
      .get('/level/promise')
      .set('x-criticality', 'degraded')
      .set('x-budget-ms', '5000')
      .expect(200);
    expect(res.body).toEqual({ level: Criticality.DEGRADED, inRun: Criticality.DEGRADED, budget: true });
    const plain = await request(server()).get('/level/promise').expect(200);
    expect(plain.body).toEqual({ level: Criticality.CRITICAL, inRun: Criticality.CRITICAL, budget: false });
  });

  it('an Observable handler is subscribed inside the scope; a spent budget is answered 504 before it runs', async () => {
    await boot(true);
    const res = await request(server()).get('/level/observable').set('x-budget-ms', '750').expect(200);
    expect(res.body).toEqual({ level: Criticality.BEST_EFFORT, budget: 750 });
    const spent = await request(server()).get('/level/observable').set('x-budget-ms', '0').expect(504);
    expect(spent.body).toMatchObject({ code: 'deadline_exceeded' });
  });
});
