import 'reflect-metadata';
import { Controller, Get, type INestApplication } from '@nestjs/common';
import { INTERCEPTORS_METADATA } from '@nestjs/common/constants';
import { ClientProxyFactory, MessagePattern, Transport, type ClientProxy } from '@nestjs/microservices';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { RateLimitStrategy, ResilienceError, ResiliencePolicy } from '@ballast/core';
import { FakeClock } from '@ballast/testing';
import { lastValueFrom } from 'rxjs';
import request from 'supertest';
import { ADAPTERS, freePort } from './__tests__/harness';
import { ResilienceModule, Resilient } from './index';

@Controller()
class QuoteController {
  @Get('quote')
  @Resilient('limited-http')
  httpQuote(): number {
    return 42;
  }

  @MessagePattern('quote')
  @Resilient('limited-rpc')
  rpcQuote(): number {
    return 42;
  }

  @MessagePattern('misconfigured')
  misconfigured(): never {
    throw new ResilienceError({ kind: 'configuration', message: "Unknown policy 'secret'" });
  }
}

/** `@Resilient` on the class: its HTTP handler is wrapped, its message handler keeps the interceptor. */
@Controller('both')
@Resilient('limited-class')
class ClassLevelController {
  @Get('quote')
  httpQuote(): number {
    return 7;
  }

  @MessagePattern('class-quote')
  rpcQuote(): number {
    return 7;
  }
}

/**
 * A hybrid application (HTTP plus `connectMicroservice`). `ResilienceModule` registers its filter with APP_FILTER,
 * which lands in the HTTP application's config; a connected microservice gets a config of its own unless it is
 * connected with `{ inheritAppConfig: true }` — and then no global filter, Ballast's included, applies to it.
 */
describe.each(ADAPTERS)('a hybrid application (%s + TCP microservice)', (adapter) => {
  let app: INestApplication;
  let client: ClientProxy;

  async function boot(inheritAppConfig: boolean): Promise<void> {
    const port = await freePort();
    const moduleRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({
          clock: new FakeClock(),
          policies: [
            new ResiliencePolicy({
              name: 'limited-http',
              strategies: [new RateLimitStrategy({ permits: 1, per: '1h' })],
            }),
            new ResiliencePolicy({
              name: 'limited-rpc',
              strategies: [new RateLimitStrategy({ permits: 1, per: '1h' })],
            }),
            new ResiliencePolicy({
              name: 'limited-class',
              strategies: [new RateLimitStrategy({ permits: 2, per: '1h' })],
            }),
          ],
        }),
      ],
      controllers: [QuoteController, ClassLevelController],
    }).compile();
    app = moduleRef.createNestApplication(
      adapter === 'express' ? new ExpressAdapter() : new FastifyAdapter(),
      { logger: false },
    );
    app.connectMicroservice(
      { transport: Transport.TCP, options: { host: '127.0.0.1', port } },
      { inheritAppConfig },
    );
    await app.startAllMicroservices();
    await app.init();
    if (adapter === 'fastify')
      await (app.getHttpAdapter().getInstance() as { ready(): Promise<unknown> }).ready();
    client = ClientProxyFactory.create({ transport: Transport.TCP, options: { host: '127.0.0.1', port } });
    await client.connect();
  }
  afterEach(async () => {
    await client?.close();
    await app?.close();
  });

  const send = (pattern: string): Promise<unknown> =>
    lastValueFrom(client.send(pattern, {})).catch((e: unknown) => e);

  it('without inheritAppConfig: HTTP is mapped, RPC rejections reach the caller as a bare internal error', async () => {
    await boot(false);
    await request(app.getHttpServer()).get('/quote').expect(200);
    await request(app.getHttpServer()).get('/quote').expect(429);
    await expect(send('quote')).resolves.toBe(42);
    // The policy still ran (the interceptor rides with the decorator); only the mapping is missing.
    expect(await send('quote')).toEqual({ status: 'error', message: 'Internal server error' });
  });

  it('with inheritAppConfig: RPC rejections are mapped like on a standalone microservice', async () => {
    await boot(true);
    await expect(send('quote')).resolves.toBe(42);
    expect(await send('quote')).toMatchObject({ status: 'error', statusCode: 429, code: 'rate_limited' });
    // …and what Ballast does not map is still a generic internal error, its message not leaked.
    expect(await send('misconfigured')).toEqual({ status: 'error', message: 'Internal server error' });
    await request(app.getHttpServer()).get('/quote').expect(200);
    await request(app.getHttpServer()).get('/quote').expect(429);
  });

  it('a class-level @Resilient covers both kinds of handler of the class, one bucket between them', async () => {
    await boot(true);
    await expect(send('class-quote')).resolves.toBe(7);
    await request(app.getHttpServer()).get('/both/quote').expect(200);
    // the two permits are spent, by the RPC handler and by the HTTP one: both ran under the policy
    expect(await send('class-quote')).toMatchObject({
      status: 'error',
      statusCode: 429,
      code: 'rate_limited',
    });
    await request(app.getHttpServer()).get('/both/quote').expect(429);
    // Nest's interceptor step is gone from the class (so from its HTTP route), kept on the message handler
    const interceptors = (target: object): string[] =>
      ((Reflect.getMetadata(INTERCEPTORS_METADATA, target) as { name: string }[] | undefined) ?? []).map(
        (i) => i.name,
      );
    expect(interceptors(ClassLevelController)).toEqual([]);
    expect(interceptors(ClassLevelController.prototype.rpcQuote)).toEqual([
      'ResilienceControllerInterceptor',
    ]);
    expect(interceptors(ClassLevelController.prototype.httpQuote)).toEqual([]);
  });
});
