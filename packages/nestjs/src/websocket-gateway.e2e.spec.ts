import 'reflect-metadata';
import {
  Catch,
  Injectable,
  UseFilters,
  type ArgumentsHost,
  type ExceptionFilter,
  type INestApplication,
} from '@nestjs/common';
import { IoAdapter } from '@nestjs/platform-socket.io';
import { MessageBody, SubscribeMessage, WebSocketGateway } from '@nestjs/websockets';
import { Test } from '@nestjs/testing';
import {
  RateLimitStrategy,
  ResilienceError,
  ResiliencePolicy,
  RetryStrategy,
  currentSignal,
} from '@ballast/core';
import { io, type Socket } from 'socket.io-client';
import { freePort } from './__tests__/harness';
import { ResilienceModule, Resilient } from './index';

/** A provider the gateway calls: decorated provider methods run under their policy from a WS handler too. */
@Injectable()
class Inventory {
  calls = 0;

  @Resilient('reservations')
  async reserve(sku: string): Promise<string> {
    this.calls++;
    return `reserved ${sku}`;
  }
}

/** The gateway's own filter for Ballast's errors: it wins over the mapping, as a controller's filter does on HTTP. */
@Catch(ResilienceError)
class OwnShape implements ExceptionFilter {
  catch(exception: ResilienceError, host: ArgumentsHost): void {
    host.switchToWs().getClient<Socket>().emit('exception', { own: exception.code });
  }
}

@WebSocketGateway()
class StockGateway {
  attempts = 0;
  signals: (AbortSignal | undefined)[] = [];

  constructor(private readonly inventory: Inventory) {}

  @SubscribeMessage('stock')
  @Resilient('retrying')
  stock(@MessageBody() sku: string): { sku: string; attempts: number } {
    this.attempts++;
    this.signals.push(currentSignal());
    if (this.attempts < 3) throw Object.assign(new Error('inventory reset'), { code: 'ECONNRESET' });
    return { sku, attempts: this.attempts };
  }

  @SubscribeMessage('quote')
  @Resilient('quota')
  quote(): number {
    return 42;
  }

  @SubscribeMessage('reserve')
  reserve(@MessageBody() sku: string): Promise<string> {
    return this.inventory.reserve(sku);
  }

  @SubscribeMessage('own')
  @UseFilters(new OwnShape())
  @Resilient('own')
  own(): number {
    return 7;
  }

  aborted: Promise<unknown> | undefined;

  @SubscribeMessage('slow')
  @Resilient('retrying')
  slow(): Promise<never> {
    const signal = currentSignal()!;
    this.aborted = new Promise((resolve) => signal.addEventListener('abort', () => resolve(signal.reason)));
    return new Promise<never>(() => {});
  }

  @SubscribeMessage('plain')
  plain(): string {
    return 'untouched';
  }
}

/** The `exception` event a client gets for a rate-limit rejection: the code, no policy name. */
const RATE_LIMITED_EVENT = {
  status: 'error',
  statusCode: 429,
  error: 'Too Many Requests',
  code: 'rate_limited',
  message: expect.any(String),
};

/**
 * A real Nest application with a socket.io gateway (`@nestjs/platform-socket.io`), called by a real socket.io
 * client over loopback: `@Resilient` on `@SubscribeMessage` handlers goes through ResilienceInterceptor, and
 * Ballast's rejections reach the client as the `exception` event Nest's own WS filter uses.
 */
describe('@Resilient on WebSocket gateway handlers (socket.io)', () => {
  let app: INestApplication;
  let client: Socket;
  let port: number;

  /** A socket.io client of the app, connected. */
  async function connect(): Promise<Socket> {
    const socket = io(`http://127.0.0.1:${port}`, { transports: ['websocket'], reconnection: false });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('connect_error', reject);
    });
    return socket;
  }

  beforeAll(async () => {
    port = await freePort();
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
              name: 'quota',
              strategies: [new RateLimitStrategy({ permits: 1, per: '1h' })],
            }),
            new ResiliencePolicy({
              name: 'own',
              strategies: [new RateLimitStrategy({ permits: 1, per: '1h' })],
            }),
            new ResiliencePolicy({
              name: 'reservations',
              strategies: [new RateLimitStrategy({ permits: 1, per: '1h' })],
            }),
          ],
        }),
      ],
      providers: [StockGateway, Inventory],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    app.useWebSocketAdapter(new IoAdapter(app));
    await app.listen(port, '127.0.0.1');
    client = await connect();
  });
  afterAll(async () => {
    client?.close();
    await app?.close();
  });

  /** The handler's acknowledgement, or the `exception` event Nest's WS filters emit on the socket. */
  function send(event: string, data?: unknown): Promise<{ ack?: unknown; exception?: unknown }> {
    return new Promise((resolve) => {
      const onException = (exception: unknown) => resolve({ exception });
      client.once('exception', onException);
      client.emit(event, data, (ack: unknown) => {
        client.off('exception', onException);
        resolve({ ack });
      });
    });
  }

  it('retries a failing handler under its policy and acknowledges its value', async () => {
    const gateway = app.get(StockGateway);
    await expect(send('stock', 'sku-1')).resolves.toEqual({ ack: { sku: 'sku-1', attempts: 3 } });
    // Each attempt ran under resilience.run with a signal of its own.
    expect(gateway.signals).toHaveLength(3);
    expect(gateway.signals.every((s) => s instanceof AbortSignal)).toBe(true);
    expect(new Set(gateway.signals).size).toBe(3);
  });

  it("maps a rejection to the client's exception event, with the code and no policy name", async () => {
    await expect(send('quote')).resolves.toEqual({ ack: 42 });
    const { exception } = await send('quote');
    expect(exception).toEqual(RATE_LIMITED_EVENT);
    expect(JSON.stringify(exception)).not.toContain('quota');
  });

  it('runs a decorated provider method called from a handler under its policy', async () => {
    const inventory = app.get(Inventory);
    await expect(send('reserve', 'a')).resolves.toEqual({ ack: 'reserved a' });
    const { exception } = await send('reserve', 'b');
    expect(exception).toEqual(RATE_LIMITED_EVENT);
    expect(inventory.calls).toBe(1);
  });

  it("keeps the gateway's own filter for these errors first", async () => {
    await expect(send('own')).resolves.toEqual({ ack: 7 });
    await expect(send('own')).resolves.toEqual({ exception: { own: 'rate_limited' } });
  });

  it("aborts a handler's call when its client disconnects", async () => {
    const gateway = app.get(StockGateway);
    const other = await connect();
    other.emit('slow', null, () => undefined);
    for (let i = 0; i < 200 && gateway.aborted === undefined; i++) await new Promise((r) => setImmediate(r));
    expect(gateway.aborted).toBeDefined();
    other.close();
    await expect(gateway.aborted).resolves.toBeDefined();
  });

  it('leaves undecorated handlers alone', async () => {
    await expect(send('plain')).resolves.toEqual({ ack: 'untouched' });
  });
});
