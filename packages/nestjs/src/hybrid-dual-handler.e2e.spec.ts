import 'reflect-metadata';
import { Controller, Get, HttpCode, Post, type INestApplication } from '@nestjs/common';
import {
  ClientProxyFactory,
  EventPattern,
  MessagePattern,
  Payload,
  Transport,
  type ClientProxy,
} from '@nestjs/microservices';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import {
  Criticality as Level,
  RateLimitStrategy,
  ResiliencePolicy,
  currentCriticality,
  currentSignal,
} from '@ballast/core';
import { FakeClock } from '@ballast/testing';
import { lastValueFrom } from 'rxjs';
import request from 'supertest';
import { ADAPTERS, eventually, freePort } from './__tests__/harness';
import { Criticality, ResilienceModule, Resilient } from './index';

/** What one invocation of a handler saw: whether it ran inside a call, and the criticality bound around it. */
interface Seen {
  readonly via: string;
  readonly inCall: boolean;
  readonly level: number;
}

/**
 * Methods that are both an HTTP route and a microservice handler: Nest calls the same function from its router and
 * from the connected microservice, so the policy must run on both paths.
 */
@Controller('dual')
class DualController {
  readonly seen: Seen[] = [];

  /** `@Payload()` is the RPC payload and, on HTTP (the same parameter type as `@Body()`), the request body. */
  @Post('quote')
  @HttpCode(200)
  @MessagePattern('dual-quote')
  @Resilient('limited-dual')
  quote(@Payload() body: { sku: string }): { sku: string; inCall: boolean } {
    this.seen.push({ via: body.sku, inCall: currentSignal() !== undefined, level: currentCriticality() });
    return { sku: body.sku, inCall: currentSignal() !== undefined };
  }

  /** No parameter decorator: Nest passes an event handler its payload as is. */
  @Get('event')
  @EventPattern('dual-event')
  @Resilient('open-dual')
  event(data?: { source?: string }): string {
    const via = typeof data?.source === 'string' ? data.source : 'http';
    this.seen.push({ via, inCall: currentSignal() !== undefined, level: currentCriticality() });
    return 'ok';
  }

  @Get('critical')
  @MessagePattern('dual-critical')
  @Criticality('CRITICAL')
  critical(): number {
    this.seen.push({ via: 'critical', inCall: currentSignal() !== undefined, level: currentCriticality() });
    return currentCriticality();
  }
}

/** The same, with the decorator on the class. */
@Controller('dual-class')
@Resilient('limited-dual-class')
class DualClassController {
  @Get('quote')
  @MessagePattern('dual-class-quote')
  quote(): { inCall: boolean } {
    return { inCall: currentSignal() !== undefined };
  }
}

describe.each(ADAPTERS)(
  'a handler that is both an HTTP route and a message handler (%s + TCP)',
  (adapter) => {
    let app: INestApplication;
    let client: ClientProxy;

    beforeEach(async () => {
      const port = await freePort();
      const moduleRef = await Test.createTestingModule({
        imports: [
          ResilienceModule.forRoot({
            clock: new FakeClock(),
            policies: [
              new ResiliencePolicy({
                name: 'limited-dual',
                strategies: [new RateLimitStrategy({ permits: 2, per: '1h' })],
              }),
              new ResiliencePolicy({
                name: 'limited-dual-class',
                strategies: [new RateLimitStrategy({ permits: 2, per: '1h' })],
              }),
              { name: 'open-dual', strategies: [] },
            ],
          }),
        ],
        controllers: [DualController, DualClassController],
      }).compile();
      app = moduleRef.createNestApplication(
        adapter === 'express' ? new ExpressAdapter() : new FastifyAdapter(),
        { logger: false },
      );
      app.connectMicroservice(
        { transport: Transport.TCP, options: { host: '127.0.0.1', port } },
        { inheritAppConfig: true },
      );
      await app.startAllMicroservices();
      await app.init();
      if (adapter === 'fastify')
        await (app.getHttpAdapter().getInstance() as { ready(): Promise<unknown> }).ready();
      client = ClientProxyFactory.create({ transport: Transport.TCP, options: { host: '127.0.0.1', port } });
      await client.connect();
    });
    afterEach(async () => {
      await client?.close();
      await app?.close();
    });

    const send = (pattern: string, data: unknown = {}): Promise<unknown> =>
      lastValueFrom(client.send(pattern, data)).catch((e: unknown) => e);

    it('runs the RPC invocation under the policy, with its payload, sharing the bucket with HTTP', async () => {
      await expect(send('dual-quote', { sku: 'rpc-1' })).resolves.toEqual({ sku: 'rpc-1', inCall: true });
      const http = await request(app.getHttpServer()).post('/dual/quote').send({ sku: 'http-1' }).expect(200);
      expect(http.body).toEqual({ sku: 'http-1', inCall: true });
      // both permits are spent: the next call is refused on either path
      expect(await send('dual-quote', { sku: 'rpc-2' })).toMatchObject({
        status: 'error',
        statusCode: 429,
        code: 'rate_limited',
      });
      await request(app.getHttpServer()).post('/dual/quote').send({ sku: 'http-2' }).expect(429);
      expect(app.get(DualController).seen.map((s) => [s.via, s.inCall])).toEqual([
        ['rpc-1', true],
        ['http-1', true],
      ]);
    });

    it('runs an @EventPattern invocation of an HTTP route under the policy', async () => {
      const controller = app.get(DualController);
      await lastValueFrom(client.emit('dual-event', { source: 'event' }));
      await eventually(() => controller.seen.length > 0);
      await request(app.getHttpServer()).get('/dual/event').expect(200);
      expect(controller.seen).toEqual([
        { via: 'event', inCall: true, level: Level.NORMAL },
        { via: 'http', inCall: true, level: Level.NORMAL },
      ]);
    });

    it('binds @Criticality on the RPC invocation too', async () => {
      await expect(send('dual-critical')).resolves.toBe(Level.CRITICAL);
      const http = await request(app.getHttpServer()).get('/dual/critical').expect(200);
      expect(http.text).toBe(String(Level.CRITICAL));
    });

    it('runs a class-level policy on both paths', async () => {
      await expect(send('dual-class-quote')).resolves.toEqual({ inCall: true });
      await request(app.getHttpServer()).get('/dual-class/quote').expect(200, { inCall: true });
      expect(await send('dual-class-quote')).toMatchObject({ statusCode: 429, code: 'rate_limited' });
      await request(app.getHttpServer()).get('/dual-class/quote').expect(429);
    });
  },
);
