import 'reflect-metadata';
import { Controller, Get, type INestApplication } from '@nestjs/common';
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
import { Criticality, Resilient, ResilienceModule, type ResilienceModuleOptions } from './index';

/**
 * One handler function, several controllers: a generic CRUD base class whose subclasses each carry their own
 * class-level decorators. Nest routes every subclass to the same `BaseCrud.prototype.list`, so whatever the
 * interceptor reads from metadata must be per (class, handler), not per handler.
 */
class BaseCrud {
  @Get()
  list(): { criticality: number } {
    return { criticality: currentCriticality() };
  }
}

@Controller('a')
@Resilient('limitA')
@Criticality('CRITICAL')
class AController extends BaseCrud {}

@Controller('b')
@Resilient('limitB')
@Criticality('BEST_EFFORT')
class BController extends BaseCrud {}

/** Undecorated: with the `headers` option the global interceptor still runs for it. */
@Controller('c')
class CController extends BaseCrud {}

function policies(): ResiliencePolicy[] {
  return [
    new ResiliencePolicy({ name: 'limitA', strategies: [new RateLimitStrategy({ permits: 1, per: '1m' })] }),
    new ResiliencePolicy({
      name: 'limitB',
      strategies: [new RateLimitStrategy({ permits: 100, per: '1m' })],
    }),
  ];
}

describe.each(ADAPTERS)('controllers inheriting one handler (%s)', (adapter) => {
  let app: INestApplication;
  let events: ResilienceEvent[];
  const http = () => request(app.getHttpServer());

  async function boot(options: Partial<ResilienceModuleOptions> = {}): Promise<void> {
    app = await bootApp(adapter, {
      imports: [ResilienceModule.forRoot({ policies: policies(), clock: new FakeClock(), ...options })],
      controllers: [AController, BController, CController],
    });
    events = [];
    app.get(Resilience).on((e) => events.push(e));
  }
  afterEach(async () => {
    await app.close();
  });

  const calls = () => events.flatMap((e) => (e.type === 'call' ? [`${e.policy}:${e.outcome}`] : []));

  it('runs each subclass under its own class-level policy, whichever is hit first', async () => {
    await boot();
    await http().get('/b').expect(200);
    await http().get('/a').expect(200);
    const limited = await http().get('/a').expect(429);
    expect(limited.body).toMatchObject({ code: 'rate_limited' });
    await http().get('/b').expect(200);
    expect(calls()).toEqual(['limitB:success', 'limitA:success', 'limitA:rejected', 'limitB:success']);
  });

  it('binds each subclass its own class-level criticality', async () => {
    await boot();
    await http().get('/b').expect(200, { criticality: Criticality.BEST_EFFORT });
    await http().get('/a').expect(200, { criticality: Criticality.CRITICAL });
  });

  it('does not let an undecorated subclass hit first (global interceptor) disable a decorated one', async () => {
    await boot({ headers: { criticality: 'x-criticality' } });
    await http().get('/c').expect(200);
    await http().get('/a').expect(200);
    await http().get('/a').expect(429);
    expect(calls()).toEqual(['limitA:success', 'limitA:rejected']);
  });
});
