import 'reflect-metadata';
import { Controller, Get, Inject, Injectable, type INestApplication } from '@nestjs/common';
import {
  BulkheadStrategy,
  RateLimitStrategy,
  Resilience,
  ResiliencePolicy,
  RetryStrategy,
  TimeoutStrategy,
  currentSignal,
  isResilienceError,
} from '@ballast/core';
import { FakeClock } from '@ballast/testing';
import { ClsModule, ClsService, InjectableProxy } from 'nestjs-cls';
import request from 'supertest';
import {
  ADAPTERS,
  bootApp,
  bootstrapError,
  deferred,
  eventually,
  pump,
  start,
  type Deferred,
} from './__tests__/harness';
import { Resilient, ResilienceModule } from './index';

const CLOCK = Symbol('clock');

function policies(): ResiliencePolicy[] {
  return [
    new ResiliencePolicy({
      name: 'flaky',
      strategies: [
        new RetryStrategy({ maxAttempts: 3, backoff: { base: 10, max: 10, jitter: 'none' } }),
        new TimeoutStrategy({ timeout: '1s' }),
      ],
    }),
    new ResiliencePolicy({
      name: 'narrow',
      strategies: [new BulkheadStrategy({ maxConcurrency: 1, maxQueue: 1 })],
    }),
    new ResiliencePolicy({ name: 'limited', strategies: [new RateLimitStrategy({ permits: 1, per: '1m' })] }),
  ];
}

/** A nestjs-cls request context: the request id comes from a header, set by ClsModule's middleware. */
function clsModule() {
  return ClsModule.forRoot({
    global: true,
    middleware: {
      mount: true,
      setup: (cls, req: { headers: Record<string, string> }) => cls.set('rid', req.headers['x-rid']),
    },
  });
}

/** An outbound client that reads the request context in every attempt. */
@Injectable()
class Warehouse {
  readonly seen: string[] = [];
  hold: Deferred<void> = deferred();

  constructor(
    private readonly cls: ClsService,
    @Inject(CLOCK) private readonly clock: FakeClock,
  ) {}

  /** Attempt 1 hangs (times out), attempt 2 resets, attempt 3 answers. */
  @Resilient('flaky')
  async stock(): Promise<string> {
    const attempt = this.seen.push(this.cls.get<string>('rid'));
    if (attempt === 1) await this.clock.sleep(5000, currentSignal());
    if (attempt === 2) throw Object.assign(new Error('reset'), { code: 'ECONNRESET' });
    return this.cls.get<string>('rid');
  }

  @Resilient('narrow')
  async reserve(hold: boolean): Promise<string> {
    if (hold) await this.hold.promise;
    return this.cls.get<string>('rid');
  }
}

/** A nestjs-cls class proxy provider: one instance per request, created by nestjs-cls (`moduleRef.create`). */
@InjectableProxy()
class RequestUser {
  constructor(private readonly cls: ClsService) {}

  @Resilient('limited')
  async profile(): Promise<{ rid: string; signal: boolean }> {
    return { rid: this.cls.get<string>('rid'), signal: currentSignal() instanceof AbortSignal };
  }
}

@Controller('cls')
class ClsController {
  constructor(
    private readonly warehouse: Warehouse,
    private readonly user: RequestUser,
    private readonly cls: ClsService,
  ) {}

  @Get('stock')
  @Resilient('flaky', { route: 'handler' })
  async stock(): Promise<{ rid: string; after: string }> {
    const rid = await this.warehouse.stock();
    return { rid, after: this.cls.get<string>('rid') };
  }

  @Get('reserve/:hold')
  async reserve(): Promise<{ rid: string; after: string }> {
    const hold = this.cls.get<string>('rid') === 'first';
    const rid = await this.warehouse.reserve(hold);
    return { rid, after: this.cls.get<string>('rid') };
  }

  @Get('profile')
  profile(): Promise<{ rid: string; signal: boolean }> {
    return this.user.profile();
  }
}

/**
 * nestjs-cls (AsyncLocalStorage request context) next to Ballast's own AsyncLocalStorage frame: the request's store
 * must reach every attempt of a decorated handler and provider (after a timeout, a retry backoff, a bulkhead
 * queue), and decorated methods of nestjs-cls proxy providers must run under their policy.
 */
describe.each(ADAPTERS)('@Resilient with nestjs-cls on %s', (adapter) => {
  let app: INestApplication;
  const clock = new FakeClock();

  beforeAll(async () => {
    app = await bootApp(adapter, {
      imports: [
        clsModule(),
        ClsModule.forFeature(RequestUser),
        ResilienceModule.forRoot({ policies: policies(), clock }),
      ],
      controllers: [ClsController],
      providers: [Warehouse, { provide: CLOCK, useValue: clock }],
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('keeps the request context through an attempt timeout and a retry backoff', async () => {
    const warehouse = app.get(Warehouse);
    warehouse.seen.length = 0;
    const res = await pump(clock, start(request(app.getHttpServer()).get('/cls/stock').set('x-rid', 'r-1')));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ rid: 'r-1', after: 'r-1' });
    expect(warehouse.seen).toEqual(['r-1', 'r-1', 'r-1']);
  });

  it('runs a call queued in a bulkhead with its own request context, not the releasing request one', async () => {
    const warehouse = app.get(Warehouse);
    warehouse.hold = deferred();
    const server = app.getHttpServer();
    const first = start(request(server).get('/cls/reserve/1').set('x-rid', 'first'));
    const resilience = app.get(Resilience);
    const waiting = async (): Promise<number> =>
      (await resilience.admin.inspect({ policy: 'narrow' }))[0]?.waiting ?? 0;
    await eventually(
      async () => ((await resilience.admin.inspect({ policy: 'narrow' }))[0]?.inUse ?? 0) === 1,
    );
    const second = start(request(server).get('/cls/reserve/0').set('x-rid', 'second'));
    await eventually(async () => (await waiting()) === 1);
    warehouse.hold.resolve(); // the first call's completion hands its slot to the second
    const [a, b] = await Promise.all([first, second]);
    expect(a.body).toEqual({ rid: 'first', after: 'first' });
    expect(b.body).toEqual({ rid: 'second', after: 'second' });
  });

  it("runs a proxy provider's decorated method under its policy", async () => {
    const server = app.getHttpServer();
    const ok = await request(server).get('/cls/profile').set('x-rid', 'p-1');
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ rid: 'p-1', signal: true });
    // The policy allows one call a minute: it is the same policy-wide bucket whatever the per-request instance.
    const refused = await request(server).get('/cls/profile').set('x-rid', 'p-2');
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('rate_limited');
  });
});

@InjectableProxy()
class Misspelled {
  @Resilient('limitted')
  async profile(): Promise<void> {}
}

it('refuses to start when a proxy provider method names an unknown policy', async () => {
  const error = await bootstrapError({
    imports: [
      clsModule(),
      ClsModule.forFeature(Misspelled),
      ResilienceModule.forRoot({ policies: policies() }),
    ],
  });
  expect(isResilienceError(error)).toBe(true);
  expect((error as Error).message).toContain("Misspelled.profile uses unknown policy 'limitted'");
});
