import 'reflect-metadata';
import { Controller, Get, Injectable, type INestApplication } from '@nestjs/common';
import { HttpModule, HttpService } from '@nestjs/axios';
import {
  BulkheadStrategy,
  Resilience,
  ResiliencePolicy,
  RetryStrategy,
  currentCriticality,
  currentSignal,
  remainingTime,
} from '@ballast/core';
import { firstValueFrom } from 'rxjs';
import request from 'supertest';
import { ADAPTERS, bootApp, deferred, type AdapterName } from './__tests__/harness';
import { Resilient } from './index';
import { ResilienceModule } from './resilience.module';

/**
 * Deadline and criticality across services (SPEC §14.4): three real Nest apps, A → B → C over real HTTP, each with
 * `headers: { deadline, criticality, propagate: true }` and @nestjs/axios's HttpService. What C sees is what A was
 * given, less the time spent on the way; when A's budget runs out, B's and C's work is aborted too.
 */
const NAMES = { deadline: 'x-deadline-budget-ms', criticality: 'x-criticality', propagate: true } as const;
const urls = { b: '', c: '' };
const seenByC: { remaining: number | undefined; level: number }[] = [];
let cAborted = deferred<unknown>();
let cHangs = false;

@Controller()
class ForwardController {
  constructor(private readonly http: HttpService) {}

  @Get('a')
  @Resilient('plain')
  async a(): Promise<unknown> {
    return (await firstValueFrom(this.http.get(`${urls.b}/b`))).data;
  }

  @Get('b')
  @Resilient('plain')
  async b(): Promise<unknown> {
    return (await firstValueFrom(this.http.get(`${urls.c}/c`))).data;
  }

  @Get('a-prio')
  async aPrio(): Promise<unknown> {
    return (await firstValueFrom(this.http.get(`${urls.b}/b-prio`))).data;
  }

  @Get('b-prio')
  async bPrio(): Promise<unknown> {
    return (await firstValueFrom(this.http.get(`${urls.c}/prio`))).data;
  }
}

@Injectable()
class Work {
  @Resilient('plain')
  async run(): Promise<{ remaining: number | null; level: number }> {
    seenByC.push({ remaining: remainingTime(), level: currentCriticality() });
    if (cHangs) {
      const signal = currentSignal()!;
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      cAborted.resolve(signal.reason);
    }
    return { remaining: remainingTime() ?? null, level: currentCriticality() };
  }
}

/** Holds C's one prioritized slot until released. */
let holding = deferred<void>();

@Controller()
class EndController {
  constructor(private readonly work: Work) {}

  @Get('c')
  c(): Promise<unknown> {
    return this.work.run();
  }

  /** One slot, a queue of one, criticality tiers: a full queue admits a more critical arrival by displacing. */
  @Get('prio')
  @Resilient('prio')
  async prio(): Promise<{ level: number }> {
    await holding.promise;
    return { level: currentCriticality() };
  }
}

const resilienceModule = () =>
  ResilienceModule.forRoot({
    headers: NAMES,
    policies: [
      new ResiliencePolicy({ name: 'plain', strategies: [new RetryStrategy({ maxAttempts: 1 })] }),
      new ResiliencePolicy({
        name: 'prio',
        strategies: [new BulkheadStrategy({ maxConcurrency: 1, maxQueue: 1, prioritized: true })],
      }),
    ],
  });

async function boot(
  adapter: AdapterName,
  controller: new (...args: never[]) => unknown,
  providers: never[] = [],
) {
  const app = await bootApp(
    adapter,
    { imports: [resilienceModule(), HttpModule], controllers: [controller], providers },
    { listen: true },
  );
  return { app, url: await app.getUrl() };
}

describe.each(ADAPTERS)('A → B → C over real HTTP with headers.propagate (%s)', (adapter) => {
  const apps: INestApplication[] = [];
  let a: INestApplication;
  let c: INestApplication;

  beforeAll(async () => {
    const A = await boot(adapter, ForwardController);
    const B = await boot(adapter, ForwardController);
    const C = await boot(adapter, EndController, [Work as never]);
    apps.push(A.app, B.app, C.app);
    a = A.app;
    c = C.app;
    urls.b = B.url.replace('[::1]', '127.0.0.1');
    urls.c = C.url.replace('[::1]', '127.0.0.1');
  });
  afterAll(async () => {
    for (const app of apps.splice(0)) await app.close();
  });

  it('C sees A’s budget less the time spent, and A’s criticality', async () => {
    seenByC.length = 0;
    const started = performance.now();
    const res = await request(a.getHttpServer())
      .get('/a')
      .set('x-deadline-budget-ms', '20000')
      .set('x-criticality', 'critical');
    const elapsed = performance.now() - started;
    expect(res.status).toBe(200);
    const seen = seenByC[0]!;
    expect(seen.level).toBe(3);
    expect(seen.remaining).toBeDefined();
    expect(seen.remaining!).toBeLessThan(20000);
    // what C was left with, plus at most the whole request's time, is A's budget (whole ms are rounded down)
    expect(seen.remaining! + elapsed + 2).toBeGreaterThanOrEqual(20000);
  });

  it('without headers nothing is bound anywhere on the way', async () => {
    seenByC.length = 0;
    const res = await request(a.getHttpServer()).get('/a');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ remaining: null, level: 2 });
  });

  it('A’s criticality reaches C’s prioritized bulkhead: a CRITICAL chain displaces a queued NORMAL request', async () => {
    holding = deferred<void>();
    const waiting = async (n: number): Promise<void> => {
      for (let i = 0; i < 20_000; i++) {
        const [state] = await c.get(Resilience).admin.inspect({ policy: 'prio' });
        if ((state?.waiting ?? 0) === n && (state?.inUse ?? 0) === 1) return;
        await new Promise((resolve) => setImmediate(resolve));
      }
      throw new Error(`C's bulkhead never had ${n} waiting`);
    };
    const server = c.getHttpServer();
    const holder = request(server)
      .get('/prio')
      .then((r) => r);
    await waiting(0);
    // No header: NORMAL. Only a more critical arrival can displace it from the full queue.
    const normal = request(server)
      .get('/prio')
      .then((r) => r);
    await waiting(1);
    const critical = request(a.getHttpServer())
      .get('/a-prio')
      .set('x-criticality', 'critical')
      .then((r) => r);
    const shed = await normal;
    expect(shed.status).toBe(503);
    expect(shed.body).toMatchObject({ code: 'bulkhead_queue_shed' });
    holding.resolve();
    expect((await holder).status).toBe(200);
    const res = await critical;
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ level: 3 });
  });

  it('when A’s budget runs out, C’s work is aborted and A answers 504', async () => {
    cHangs = true;
    cAborted = deferred<unknown>();
    try {
      const res = await request(a.getHttpServer()).get('/a').set('x-deadline-budget-ms', '300');
      await cAborted.promise;
      // A's own call hit the deadline (its handler runs under a policy): 504, as SPEC §9 maps deadline_exceeded
      expect(res.status).toBe(504);
      expect(res.body).toMatchObject({ code: 'deadline_exceeded' });
    } finally {
      cHangs = false;
    }
  });
});
