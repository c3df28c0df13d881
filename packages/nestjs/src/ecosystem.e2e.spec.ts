import 'reflect-metadata';
import { createServer, type Server } from 'node:http';
import {
  Body,
  Controller,
  Get,
  Injectable,
  Post,
  Scope,
  UseInterceptors,
  UsePipes,
  ValidationPipe,
  Version,
  VersioningType,
  type INestApplication,
} from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { HttpModule, HttpService } from '@nestjs/axios';
import { CacheInterceptor, CacheModule } from '@nestjs/cache-manager';
import { CommandBus, CommandHandler, CqrsModule, type ICommandHandler } from '@nestjs/cqrs';
import { EventEmitter2, EventEmitterModule, OnEvent } from '@nestjs/event-emitter';
import { Throttle, ThrottlerGuard, ThrottlerModule } from '@nestjs/throttler';
import {
  RateLimitStrategy,
  ResiliencePolicy,
  RetryStrategy,
  TimeoutStrategy,
  currentSignal,
} from '@ballast/core';
import { FakeClock } from '@ballast/testing';
import { IsInt, IsString, Min } from 'class-validator';
// A value import: `design:returntype` must see the Observable class for the method to be wrapped lazily.
import { Observable, firstValueFrom, map } from 'rxjs';
import request from 'supertest';
import { ADAPTERS, bootApp, eventually, pump, start } from './__tests__/harness';
import { CallSignal, Resilient, ResilienceAdminModule, ResilienceModule } from './index';

const reset = (): Error => Object.assign(new Error('connection reset'), { code: 'ECONNRESET' });

function policies(): ResiliencePolicy[] {
  return [
    new ResiliencePolicy({ name: 'limited', strategies: [new RateLimitStrategy({ permits: 1, per: '1m' })] }),
    new ResiliencePolicy({
      name: 'retrying',
      strategies: [new RetryStrategy({ maxAttempts: 3, backoff: { base: 1, max: 1, jitter: 'none' } })],
    }),
    new ResiliencePolicy({
      name: 'slow',
      strategies: [
        new RetryStrategy({ maxAttempts: 2, backoff: { base: 1, max: 1, jitter: 'none' } }),
        new TimeoutStrategy({ timeout: '1s' }),
      ],
    }),
  ];
}

// ---- @nestjs/event-emitter and @nestjs/cqrs: they find handlers on the instance after Ballast wrapped them ----

@Injectable()
class OrderListener {
  attempts = 0;
  readonly handled: string[] = [];

  @OnEvent('order.created', { async: true, promisify: true })
  @Resilient('retrying')
  async onCreated(event: { id: string }): Promise<void> {
    if (++this.attempts < 3) throw reset();
    this.handled.push(`${event.id}:${String(currentSignal() instanceof AbortSignal)}`);
  }
}

class ReserveStock {
  constructor(readonly sku: string) {}
}

@CommandHandler(ReserveStock)
class ReserveStockHandler implements ICommandHandler<ReserveStock> {
  attempts = 0;

  @Resilient('retrying')
  async execute(command: ReserveStock): Promise<string> {
    if (++this.attempts < 3) throw reset();
    return `reserved ${command.sku} after ${this.attempts} attempts`;
  }
}

class Audit {}

@CommandHandler(Audit)
@Injectable({ scope: Scope.REQUEST })
class AuditHandler implements ICommandHandler<Audit> {
  @Resilient('limited', { route: 'audit' })
  async execute(): Promise<string> {
    return 'audited';
  }
}

describe('@Resilient on @OnEvent listeners and CQRS handlers', () => {
  let app: INestApplication;

  beforeAll(async () => {
    app = await bootApp('express', {
      imports: [
        EventEmitterModule.forRoot(),
        CqrsModule.forRoot(),
        ResilienceModule.forRoot({ policies: policies() }),
      ],
      providers: [OrderListener, ReserveStockHandler, AuditHandler],
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('runs an event listener under its policy (retried, with a signal)', async () => {
    await app.get(EventEmitter2).emitAsync('order.created', { id: 'o-1' });
    const listener = app.get(OrderListener);
    expect(listener.attempts).toBe(3);
    expect(listener.handled).toEqual(['o-1:true']);
  });

  it("runs a command handler's execute under its policy, static and request-scoped", async () => {
    const bus = app.get(CommandBus);
    await expect(bus.execute(new ReserveStock('sku-1'))).resolves.toBe('reserved sku-1 after 3 attempts');
    await expect(bus.execute(new Audit())).resolves.toBe('audited');
    await expect(bus.execute(new Audit())).rejects.toMatchObject({ code: 'rate_limited' });
  });
});

// ---- HTTP: @nestjs/throttler, ValidationPipe, CacheInterceptor, global prefix + URI versioning ----

class OrderDto {
  @IsString() sku!: string;
  @IsInt() @Min(1) qty!: number;
}

@Controller('shop')
class ShopController {
  orders = 0;
  cacheMisses = 0;

  @Get('stock')
  @Version('1')
  @Throttle({ default: { limit: 2, ttl: 60_000 } })
  @Resilient('limited', { route: 'stock-v1' })
  stockV1(): { version: number } {
    return { version: 1 };
  }

  @Get('stock')
  @Version('2')
  @Throttle({ default: { limit: 1, ttl: 60_000 } })
  @Resilient('limited', { route: 'stock-v2' })
  stockV2(): { version: number } {
    return { version: 2 };
  }

  @Post('orders')
  @Version('1')
  @UsePipes(new ValidationPipe({ transform: true, whitelist: true, forbidNonWhitelisted: true }))
  @Resilient('retrying', { route: 'orders' })
  order(@Body() dto: OrderDto, @CallSignal() signal: AbortSignal): object {
    if (++this.orders < 2) throw reset();
    return { dto, isDto: dto instanceof OrderDto, signal: signal instanceof AbortSignal, calls: this.orders };
  }

  @Get('catalog')
  @Version('1')
  @UseInterceptors(CacheInterceptor)
  @Resilient('limited', { route: 'catalog' })
  catalog(): { misses: number } {
    return { misses: ++this.cacheMisses };
  }
}

describe.each(ADAPTERS)('@Resilient handlers next to common Nest HTTP features on %s', (adapter) => {
  let app: INestApplication;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ThrottlerModule.forRoot([{ name: 'default', limit: 100, ttl: 60_000 }]),
        CacheModule.register(),
        ResilienceModule.forRoot({ policies: policies() }),
        ResilienceAdminModule.forRoot({ unsafeAllowAnonymous: true }),
      ],
      controllers: [ShopController],
      providers: [{ provide: APP_GUARD, useClass: ThrottlerGuard }],
    }).compile();
    app = moduleRef.createNestApplication(
      adapter === 'express' ? new ExpressAdapter() : new FastifyAdapter(),
      {
        logger: false,
      },
    );
    app.setGlobalPrefix('api');
    app.enableVersioning({ type: VersioningType.URI });
    await app.init();
    if (adapter === 'fastify')
      await (app.getHttpAdapter().getInstance() as { ready(): Promise<unknown> }).ready();
  });
  afterAll(async () => {
    await app?.close();
  });

  it("keeps each version's handler, policy route and throttle; both 429s keep their own shape", async () => {
    const server = app.getHttpServer();
    const v1 = await request(server).get('/api/v1/shop/stock');
    expect([v1.status, v1.body]).toEqual([200, { version: 1 }]);
    // v1: the guard admits (2 a minute), then Ballast refuses (1 a minute): Ballast's 429.
    const ballast = await request(server).get('/api/v1/shop/stock');
    expect(ballast.status).toBe(429);
    expect(ballast.body.code).toBe('rate_limited');
    expect(Number(ballast.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // v2 has its own Ballast route and throttle: the guard refuses first, and its answer is left as it is.
    expect((await request(server).get('/api/v2/shop/stock')).status).toBe(200);
    const throttled = await request(server).get('/api/v2/shop/stock');
    expect(throttled.status).toBe(429);
    expect(throttled.body).toMatchObject({
      statusCode: 429,
      message: 'ThrottlerException: Too Many Requests',
    });
    expect(throttled.body.code).toBeUndefined();
    // The admin API follows the global prefix (it has no version: neutral under URI versioning).
    const state = await request(server).get('/api/resilience/state?policy=limited');
    expect(state.status).toBe(200);
    expect((state.body.state as { route: string }[]).map((s) => s.route).sort()).toEqual([
      'stock-v1',
      'stock-v2',
    ]);
  });

  it('validates once before the policy; retries get the transformed DTO', async () => {
    const server = app.getHttpServer();
    const controller = app.get(ShopController);
    controller.orders = 0;
    const invalid = await request(server).post('/api/v1/shop/orders').send({ sku: 'a', qty: 0 });
    expect(invalid.status).toBe(400);
    expect(controller.orders).toBe(0);
    const ok = await request(server).post('/api/v1/shop/orders').send({ sku: 'a', qty: 2 });
    expect(ok.status).toBe(201);
    expect(ok.body).toEqual({ dto: { sku: 'a', qty: 2 }, isDto: true, signal: true, calls: 2 });
  });

  it('serves cache hits without running the policy', async () => {
    const server = app.getHttpServer();
    for (let i = 0; i < 3; i++) {
      const res = await request(server).get('/api/v1/shop/catalog');
      expect([res.status, res.body]).toEqual([200, { misses: 1 }]); // one permit a minute: hits spend none
    }
  });
});

// ---- @nestjs/axios: an attempt's timeout stops the outbound HTTP request ----

@Injectable()
class InventoryApi {
  base = '';
  constructor(private readonly http: HttpService) {}

  @Resilient('slow')
  async viaSignal(): Promise<string> {
    const res = await firstValueFrom(this.http.get(`${this.base}/stock`, { signal: currentSignal()! }));
    return String(res.data);
  }

  @Resilient('slow', { route: 'observable' })
  viaObservable(): Observable<string> {
    return this.http.get(`${this.base}/stock`).pipe(map((res) => String(res.data)));
  }
}

describe('@Resilient provider methods calling @nestjs/axios HttpService', () => {
  let app: INestApplication;
  let upstream: Server;
  const clock = new FakeClock();
  let requests = 0;
  let abandoned = 0;

  beforeAll(async () => {
    // Every other request hangs until the client gives up on it.
    upstream = createServer((req, res) => {
      if (++requests % 2 === 1) return void req.on('close', () => abandoned++);
      res.end('7');
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    app = await bootApp('express', {
      imports: [HttpModule, ResilienceModule.forRoot({ policies: policies(), clock })],
      providers: [InventoryApi],
    });
    const address = upstream.address() as { port: number };
    app.get(InventoryApi).base = `http://127.0.0.1:${address.port}`;
  });
  afterAll(async () => {
    await app?.close();
    upstream.closeAllConnections();
    await new Promise((resolve) => upstream.close(resolve));
  });

  it.each(['viaSignal', 'viaObservable'] as const)(
    '%s: the timed-out attempt is aborted, the retry answers',
    async (method) => {
      const api = app.get(InventoryApi);
      const before = abandoned;
      const result = method === 'viaSignal' ? api.viaSignal() : firstValueFrom(api.viaObservable());
      await expect(pump(clock, start(result), 100)).resolves.toBe('7');
      await eventually(() => abandoned === before + 1);
    },
  );
});
