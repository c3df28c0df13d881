import 'reflect-metadata';
import {
  Catch,
  Controller,
  Get,
  Header,
  HttpCode,
  Injectable,
  Param,
  ParseIntPipe,
  Query,
  Scope,
  SetMetadata,
  UseGuards,
  UseInterceptors,
  createParamDecorator,
  type ArgumentsHost,
  type CallHandler,
  type ExceptionFilter,
  type CanActivate,
  type ExecutionContext,
  type INestApplication,
  type NestInterceptor,
} from '@nestjs/common';
import { APP_FILTER, Reflector } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import { INTERCEPTORS_METADATA } from '@nestjs/common/constants';
import {
  RateLimitStrategy,
  Resilience,
  ResiliencePolicy,
  RetryStrategy,
  currentSignal,
  type ResilienceEvent,
} from '@ballast/core';
import { FakeClock } from '@ballast/testing';
import { map, type Observable } from 'rxjs';
import request from 'supertest';
import { ADAPTERS, bootApp, pump, start } from './__tests__/harness';
import { CallSignal, ResilienceInterceptor, ResilienceModule, Resilient } from './index';

const log: string[] = [];
let failuresLeft = 0;

@Injectable()
class RoleGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}
  canActivate(context: ExecutionContext): boolean {
    // A user guard reads its metadata from the handler Nest hands it: the wrapper must carry it.
    const role = this.reflector.get<string | undefined>('role', context.getHandler());
    log.push(`guard:${role}`);
    const req = context.switchToHttp().getRequest<{ headers: Record<string, string> }>();
    return req.headers['x-deny'] === undefined;
  }
}

@Injectable()
class EnvelopeInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    log.push('interceptor');
    return next.handle().pipe(map((body: unknown) => ({ envelope: body })));
  }
}

/** A user's own parameter decorator: resolved by Nest before the handler (and its policy) runs. */
const Tenant = createParamDecorator(
  (_data: unknown, ctx: ExecutionContext) =>
    ctx.switchToHttp().getRequest<{ headers: Record<string, string> }>().headers['x-tenant'],
);

@Controller('w')
class WrappedController {
  @Get('item/:id')
  @Resilient('retrying')
  @UseGuards(RoleGuard)
  @UseInterceptors(EnvelopeInterceptor)
  @HttpCode(202)
  @Header('x-handler', 'item')
  @SetMetadata('role', 'reader')
  item(
    @Param('id', ParseIntPipe) id: number,
    @Query('q') q: string | undefined,
    @Tenant() tenant: string | undefined,
  ): { id: number; q: string | null; tenant: string | null; args: number; signal: boolean } {
    log.push(`handler:${typeof id}`);
    if (failuresLeft > 0) {
      failuresLeft--;
      throw Object.assign(new Error('flaky backend'), { status: 503 });
    }
    return {
      id,
      q: q ?? null,
      tenant: tenant ?? null,
      // Nest passed the request as one more argument; the handler must not see it.
      args: arguments.length,
      signal: currentSignal() !== undefined,
    };
  }

  @Get('signal')
  @Resilient('retrying')
  signal(@CallSignal() signal: AbortSignal): { same: boolean; aborted: boolean } {
    return { same: signal === currentSignal(), aborted: signal.aborted };
  }
}

describe.each(ADAPTERS)('a wrapped HTTP handler keeps what Nest gives a handler (%s)', (adapter) => {
  let app: INestApplication | undefined;
  let events: ResilienceEvent[];
  let clock: FakeClock;
  let intercepts: jest.SpiedFunction<ResilienceInterceptor['intercept']>;

  beforeEach(async () => {
    log.length = 0;
    failuresLeft = 0;
    events = [];
    clock = new FakeClock();
    intercepts = jest.spyOn(ResilienceInterceptor.prototype, 'intercept');
    app = await bootApp(adapter, {
      imports: [
        ResilienceModule.forRoot({
          clock,
          policies: [
            new ResiliencePolicy({
              name: 'retrying',
              strategies: [
                new RetryStrategy({ maxAttempts: 3, backoff: { base: 10, max: 10, jitter: 'none' } }),
              ],
            }),
          ],
        }),
      ],
      controllers: [WrappedController],
      providers: [RoleGuard],
    });
    app.get(Resilience).on((e) => events.push(e));
  });
  afterEach(async () => {
    intercepts.mockRestore();
    await app?.close();
    app = undefined;
  });
  const server = () => app!.getHttpServer();
  const calls = () => events.filter((e) => e.type === 'call');

  it('runs guards, pipes, custom parameters, the user interceptor, status and headers around the policy', async () => {
    const res = await request(server())
      .get('/w/item/42?q=shoes')
      .set('x-tenant', 'acme')
      .expect(202)
      .expect('x-handler', 'item');
    expect(res.body).toEqual({
      envelope: { id: 42, q: 'shoes', tenant: 'acme', args: 3, signal: true },
    });
    expect(log).toEqual(['guard:reader', 'interceptor', 'handler:number']);
    expect(calls()).toHaveLength(1);
    expect(intercepts).not.toHaveBeenCalled();
    // Ballast's own interceptor is gone from the route; the user's stays.
    const handler = (WrappedController.prototype as unknown as Record<string, object>).item!;
    expect(Reflect.getMetadata(INTERCEPTORS_METADATA, handler)).toEqual([EnvelopeInterceptor]);
  });

  it('retries the handler with the arguments Nest resolved once (pipes and guards do not re-run)', async () => {
    failuresLeft = 2;
    const res = await pump(clock, start(request(server()).get('/w/item/7')));
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ envelope: { id: 7, q: null, tenant: null, args: 3, signal: true } });
    expect(log).toEqual([
      'guard:reader',
      'interceptor',
      'handler:number',
      'handler:number',
      'handler:number',
    ]);
    expect(events.filter((e) => e.type === 'retry')).toHaveLength(2);
  });

  it('answers a pipe or guard rejection before the policy: no call is recorded', async () => {
    await request(server()).get('/w/item/not-a-number').expect(400);
    await request(server()).get('/w/item/1').set('x-deny', '1').expect(403);
    expect(calls()).toHaveLength(0);
    expect(log).not.toContain('handler:number');
  });

  it('gives @CallSignal() parameters the running attempt’s signal', async () => {
    await request(server()).get('/w/signal').expect(200, { same: true, aborted: false });
  });
});

describe('two applications sharing a controller class', () => {
  it('each runs the policies of its own Resilience', async () => {
    const policies = () => [new ResiliencePolicy({ name: 'retrying', strategies: [] })];
    const apps = await Promise.all(
      ADAPTERS.map((adapter) =>
        bootApp(adapter, {
          imports: [ResilienceModule.forRoot({ policies: policies() })],
          controllers: [WrappedController],
          providers: [RoleGuard],
        }),
      ),
    );
    try {
      const seen = apps.map(() => [] as string[]);
      apps.forEach((a, i) => a.get(Resilience).on((e) => e.type === 'call' && seen[i]!.push(e.policy)));
      await request(apps[0]!.getHttpServer()).get('/w/item/1').expect(202);
      expect(seen).toEqual([['retrying'], []]);
      await request(apps[1]!.getHttpServer()).get('/w/item/2').expect(202);
      await request(apps[1]!.getHttpServer()).get('/w/item/3').expect(202);
      expect(seen).toEqual([['retrying'], ['retrying', 'retrying']]);
    } finally {
      await Promise.all(apps.map((a) => a.close()));
    }
  });
});

@Controller({ path: 'per-request', scope: Scope.REQUEST })
class RequestScopedController {
  @Get()
  @Resilient('once')
  get(): { wrapped: boolean } {
    return { wrapped: currentSignal() !== undefined };
  }
}

describe.each(ADAPTERS)('a request-scoped controller (%s)', (adapter) => {
  it('runs its decorated handler under the policy on every per-request instance', async () => {
    const app = await bootApp(adapter, {
      imports: [
        ResilienceModule.forRoot({
          policies: [
            new ResiliencePolicy({
              name: 'once',
              strategies: [new RateLimitStrategy({ permits: 1, per: '1m' })],
            }),
          ],
        }),
      ],
      controllers: [RequestScopedController],
    });
    try {
      const calls: string[] = [];
      app.get(Resilience).on((e) => e.type === 'call' && calls.push(e.policy));
      await request(app.getHttpServer()).get('/per-request').expect(200, { wrapped: true });
      const refused = await request(app.getHttpServer()).get('/per-request').expect(429);
      expect(refused.body).toMatchObject({ code: 'rate_limited' });
      expect(calls).toEqual(['once', 'once']); // the refused call is a call too (SPEC §8 counts rejections)
    } finally {
      await app.close();
    }
  });
});

@Controller('base')
class BaseController {
  @Get()
  @Resilient('counted')
  list(@Query('q') q: string | undefined): { q: string | null; args: number } {
    return { q: q ?? null, args: arguments.length };
  }
}

/** Registered too: it inherits the handler, and its class-level binding loses to the method's. */
@Controller('derived')
@Resilient('counted', { route: 'derived' })
class DerivedController extends BaseController {}

describe.each(ADAPTERS)('a controller inheriting a handler from another controller (%s)', (adapter) => {
  it('runs each class under its binding, the handler seeing only its own arguments', async () => {
    const app = await bootApp(adapter, {
      imports: [
        ResilienceModule.forRoot({ policies: [new ResiliencePolicy({ name: 'counted', strategies: [] })] }),
      ],
      controllers: [BaseController, DerivedController],
    });
    try {
      const calls: [string, string | undefined][] = [];
      app.get(Resilience).on((e) => e.type === 'call' && calls.push([e.policy, e.route]));
      await request(app.getHttpServer()).get('/base?q=a').expect(200, { q: 'a', args: 1 });
      await request(app.getHttpServer()).get('/derived?q=b').expect(200, { q: 'b', args: 1 });
      // the method's own decorator wins over the derived class's
      expect(calls).toEqual([
        ['counted', undefined],
        ['counted', undefined],
      ]);
    } finally {
      await app.close();
    }
  });
});

describe.each(ADAPTERS)('request-scoped controllers of two applications alive at once (%s)', (adapter) => {
  it('each application’s requests run its own policies, not the latest application’s', async () => {
    const limited = (permits: number) =>
      ResilienceModule.forRoot({
        policies: [
          new ResiliencePolicy({ name: 'once', strategies: [new RateLimitStrategy({ permits, per: '1m' })] }),
        ],
      });
    const strict = await bootApp(adapter, { imports: [limited(1)], controllers: [RequestScopedController] });
    const lenient = await bootApp(adapter, {
      imports: [limited(100)],
      controllers: [RequestScopedController],
    });
    try {
      const seen = { strict: 0, lenient: 0 };
      strict.get(Resilience).on((e) => e.type === 'call' && seen.strict++);
      lenient.get(Resilience).on((e) => e.type === 'call' && seen.lenient++);
      await request(strict.getHttpServer()).get('/per-request').expect(200, { wrapped: true });
      await request(strict.getHttpServer()).get('/per-request').expect(429);
      await request(lenient.getHttpServer()).get('/per-request').expect(200, { wrapped: true });
      expect(seen).toEqual({ strict: 2, lenient: 1 });
    } finally {
      await Promise.all([strict.close(), lenient.close()]);
    }
  });

  it('an application that does not import ResilienceModule refuses the decorated route instead of borrowing one', async () => {
    const withBallast = await bootApp(adapter, {
      imports: [
        ResilienceModule.forRoot({ policies: [new ResiliencePolicy({ name: 'once', strategies: [] })] }),
      ],
      controllers: [RequestScopedController],
    });
    const thrown: unknown[] = [];
    @Catch()
    class Capture implements ExceptionFilter {
      catch(error: unknown, host: ArgumentsHost): void {
        thrown.push(error);
        const reply = host.switchToHttp().getResponse<{ status?: unknown; code?: unknown }>();
        const http = without.getHttpAdapter();
        http.reply(reply, { statusCode: 500 }, 500);
      }
    }
    const without: INestApplication = await bootApp(adapter, {
      controllers: [RequestScopedController],
      providers: [{ provide: APP_FILTER, useClass: Capture }],
    });
    try {
      let borrowed = 0;
      withBallast.get(Resilience).on((e) => e.type === 'call' && borrowed++);
      await request(without.getHttpServer()).get('/per-request').expect(500);
      expect(borrowed).toBe(0);
      expect(thrown).toEqual([
        expect.objectContaining({
          kind: 'configuration',
          message: expect.stringContaining(
            'RequestScopedController.get has @Resilient/@Hedged/@Criticality, but the application serving it does not import ResilienceModule',
          ),
        }),
      ]);
    } finally {
      await Promise.all([withBallast.close(), without.close()]);
    }
  });
});

@Controller('direct')
class DirectCallController {
  @Get('find')
  @Resilient('counted')
  find(@Query('q') q: string, opts: { limit: number } = { limit: 10 }): { q: string; limit: number } {
    return { q, limit: opts.limit };
  }

  @Get('many')
  findMany(): { q: string; limit: number }[] {
    return ['a', 'b'].map((q) => this.find(q, { limit: 1 }));
  }
}

describe.each(ADAPTERS)('a decorated handler called as a plain method (%s)', (adapter) => {
  it('runs as written — no policy, no argument taken — from another handler and from a unit test', async () => {
    const app = await bootApp(adapter, {
      imports: [
        ResilienceModule.forRoot({ policies: [new ResiliencePolicy({ name: 'counted', strategies: [] })] }),
      ],
      controllers: [DirectCallController],
    });
    try {
      const calls: string[] = [];
      app.get(Resilience).on((e) => e.type === 'call' && calls.push(e.policy));
      await request(app.getHttpServer())
        .get('/direct/many')
        .expect(200, [
          { q: 'a', limit: 1 },
          { q: 'b', limit: 1 },
        ]);
      expect(app.get(DirectCallController).find('x', { limit: 1 })).toEqual({ q: 'x', limit: 1 });
      expect(calls).toEqual([]);
      // Through the router it is still the decorated route.
      await request(app.getHttpServer()).get('/direct/find?q=r').expect(200, { q: 'r', limit: 10 });
      expect(calls).toEqual(['counted']);
    } finally {
      await app.close();
    }
  });
});

describe('an HTTP adapter other than Express or Fastify', () => {
  it('fails the bootstrap instead of serving decorated routes without their policy', async () => {
    class OtherAdapter extends ExpressAdapter {
      override getType(): string {
        return 'other';
      }
    }
    const moduleRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({ policies: [new ResiliencePolicy({ name: 'counted', strategies: [] })] }),
      ],
      controllers: [DirectCallController],
    }).compile();
    const app = moduleRef.createNestApplication(new OtherAdapter(), { logger: false });
    try {
      await expect(app.init()).rejects.toMatchObject({
        kind: 'configuration',
        message: expect.stringContaining(
          "DirectCallController.find: decorated HTTP handlers run on the Express and Fastify adapters only, and this application uses 'other'",
        ),
      });
    } finally {
      await app.close().catch(() => undefined);
    }
  });
});
