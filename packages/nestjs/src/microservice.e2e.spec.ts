import 'reflect-metadata';
import { Controller, type INestMicroservice } from '@nestjs/common';
import { ClientProxyFactory, MessagePattern, Transport, type ClientProxy } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { RateLimitStrategy, ResiliencePolicy, RetryStrategy, currentSignal } from '@ballast/core';
import { lastValueFrom } from 'rxjs';
import { freePort } from './__tests__/harness';
import { ResilienceModule, Resilient } from './index';

@Controller()
class StockHandlers {
  attempts = 0;
  signals: (AbortSignal | undefined)[] = [];

  @MessagePattern('stock')
  @Resilient('retrying')
  stock(sku: string): { sku: string; attempts: number } {
    this.attempts++;
    this.signals.push(currentSignal());
    if (this.attempts < 3) throw Object.assign(new Error('inventory reset'), { code: 'ECONNRESET' });
    return { sku, attempts: this.attempts };
  }

  @MessagePattern('quote')
  @Resilient('limited')
  quote(): number {
    return 42;
  }

  @MessagePattern('plain')
  plain(): string {
    return 'untouched';
  }
}

/** A real Nest microservice on the TCP transport, called through a real ClientProxy over loopback. */
describe('@Resilient on microservice (RPC) handlers, over TCP', () => {
  let service: INestMicroservice;
  let client: ClientProxy;
  let handlers: StockHandlers;

  beforeAll(async () => {
    const port = await freePort();
    const moduleRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({
          policies: [
            new ResiliencePolicy({
              name: 'retrying',
              strategies: [
                new RetryStrategy({ maxAttempts: 3, backoff: { base: 1, max: 1, jitter: 'none' } }),
              ],
            }),
            new ResiliencePolicy({
              name: 'limited',
              strategies: [new RateLimitStrategy({ permits: 1, per: '1h' })],
            }),
          ],
        }),
      ],
      controllers: [StockHandlers],
    }).compile();
    service = moduleRef.createNestMicroservice({
      transport: Transport.TCP,
      options: { host: '127.0.0.1', port },
      logger: false,
    });
    await service.listen();
    handlers = service.get(StockHandlers);
    client = ClientProxyFactory.create({ transport: Transport.TCP, options: { host: '127.0.0.1', port } });
    await client.connect();
  });
  afterAll(async () => {
    await client?.close();
    await service?.close();
  });

  it('retries a failing handler under its policy and returns its value to the caller', async () => {
    await expect(lastValueFrom(client.send('stock', 'sku-1'))).resolves.toEqual({
      sku: 'sku-1',
      attempts: 3,
    });
    expect(handlers.attempts).toBe(3);
    // every attempt ran under its own call, with a signal of its own
    expect(handlers.signals.every((s) => s instanceof AbortSignal)).toBe(true);
    expect(new Set(handlers.signals).size).toBe(3);
  });

  it('sends a rejection back as an RPC error carrying the code, without policy names', async () => {
    await expect(lastValueFrom(client.send('quote', {}))).resolves.toBe(42);
    const error: unknown = await lastValueFrom(client.send('quote', {})).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 'error', statusCode: 429, code: 'rate_limited' });
    expect(error).not.toHaveProperty('policy');
    expect((error as { message: string }).message).not.toMatch(/\blimited\b/);
  });

  it('leaves undecorated patterns alone', async () => {
    await expect(lastValueFrom(client.send('plain', {}))).resolves.toBe('untouched');
  });
});
