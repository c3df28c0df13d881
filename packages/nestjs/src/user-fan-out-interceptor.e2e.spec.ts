import 'reflect-metadata';
import {
  Controller,
  Injectable,
  UseInterceptors,
  type CallHandler,
  type ExecutionContext,
  type INestApplication,
  type INestMicroservice,
  type NestInterceptor,
} from '@nestjs/common';
import { ClientProxyFactory, MessagePattern, Transport, type ClientProxy } from '@nestjs/microservices';
import { IoAdapter } from '@nestjs/platform-socket.io';
import { SubscribeMessage, WebSocketGateway } from '@nestjs/websockets';
import { Test } from '@nestjs/testing';
import {
  CircuitBreakerStrategy,
  Resilience,
  ResiliencePolicy,
  RetryStrategy,
  currentSignal,
  type ResilienceEvent,
} from '@ballast/core';
import { lastValueFrom, merge, switchMap, timer, toArray, type Observable } from 'rxjs';
import { io, type Socket } from 'socket.io-client';
import { deferred, freePort, type Deferred } from './__tests__/harness';
import { ResilienceModule, Resilient } from './index';

/**
 * A user's interceptor that subscribes `next.handle()` twice at once (fan-out). Nest calls the next entry's
 * `intercept` for each subscription before either is subscribed, so each copy is a call of its own under the policy.
 * With Ballast's interceptor listed twice (class and method), the first call must stay claimed when the second ends
 * first: its retry must not reach the method's entry unclaimed and run the policy nested in itself.
 */
@Injectable()
class FanOutTwice implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return merge(next.handle(), next.handle());
  }
}

/**
 * A hedge made by hand: a second copy subscribed while the first copy's call is still running. It reaches the same
 * Ballast entry again (its own claim) and runs as a call of its own under the policy, on NestJS 11 and 12 alike.
 */
@Injectable()
class LateCopy implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return merge(next.handle(), timer(5).pipe(switchMap(() => next.handle())));
  }
}

/** What the handlers saw, reset per test: each attempt's signal; the first attempt fails once `release` resolves. */
const state = { signals: [] as (AbortSignal | undefined)[], release: deferred() as Deferred<void> };
async function attempt(): Promise<number> {
  const n = state.signals.push(currentSignal());
  if (n === 1) {
    await state.release.promise;
    throw Object.assign(new Error('inventory reset'), { code: 'ECONNRESET' });
  }
  return n;
}

class RpcHandlers {
  @MessagePattern('fanned.guarded')
  @Resilient('guarded')
  guarded(): number {
    return state.signals.push(currentSignal());
  }

  @MessagePattern('fanned.retrying')
  @Resilient('retrying')
  retrying(): Promise<number> {
    return attempt();
  }
}

@Controller()
@UseInterceptors(FanOutTwice)
class FannedHandlers extends RpcHandlers {}

@Controller()
@Resilient('guarded')
@UseInterceptors(FanOutTwice)
class DoublyBoundFannedHandlers extends RpcHandlers {}

/** The first copy waits until the late copy has run. */
async function lateCopies(): Promise<number> {
  const n = state.signals.push(currentSignal());
  if (n === 1) await state.release.promise;
  else state.release.resolve();
  return n;
}

@Controller()
@UseInterceptors(LateCopy)
class LateCopyHandlers {
  @MessagePattern('late.guarded')
  @Resilient('guarded')
  guarded(): Promise<number> {
    return lateCopies();
  }
}

@Controller()
@Resilient('guarded')
@UseInterceptors(LateCopy)
class DoublyBoundLateCopyHandlers {
  @MessagePattern('late.guarded')
  @Resilient('guarded')
  guarded(): Promise<number> {
    return lateCopies();
  }
}

@WebSocketGateway()
@UseInterceptors(FanOutTwice)
class FannedGateway {
  @SubscribeMessage('guarded')
  @Resilient('guarded')
  guarded(): number {
    return state.signals.push(currentSignal());
  }
}

const resilienceModule = () =>
  ResilienceModule.forRoot({
    policies: [
      new ResiliencePolicy({
        name: 'guarded',
        strategies: [
          new CircuitBreakerStrategy({
            failureRatio: 0.5,
            samplingWindow: '1m',
            minThroughput: 100,
            breakDuration: '1h',
          }),
        ],
      }),
      new ResiliencePolicy({
        name: 'retrying',
        strategies: [new RetryStrategy({ maxAttempts: 2, backoff: { base: 1, max: 1, jitter: 'none' } })],
      }),
    ],
  });

let events: ResilienceEvent[];
const calls = (policy: string) =>
  events.flatMap((e) => (e.type === 'call' && e.policy === policy ? [e.outcome] : []));
beforeEach(() => {
  events = [];
  state.signals = [];
  state.release = deferred();
});

describe.each([
  ['@Resilient on the method', FannedHandlers],
  ['@Resilient on the class too', DoublyBoundFannedHandlers],
])("a user's fan-out interceptor around @Resilient RPC handlers over TCP (%s)", (_, controller) => {
  let service: INestMicroservice;
  let client: ClientProxy;
  let resilience: Resilience;

  beforeAll(async () => {
    const port = await freePort();
    const moduleRef = await Test.createTestingModule({
      imports: [resilienceModule()],
      controllers: [controller],
    }).compile();
    service = moduleRef.createNestMicroservice({
      transport: Transport.TCP,
      options: { host: '127.0.0.1', port },
      logger: false,
    });
    await service.listen();
    resilience = service.get(Resilience);
    resilience.on((e) => {
      events.push(e);
      // the first call's attempt fails only once the second call has ended
      if (e.type === 'call' && e.policy === 'retrying' && e.outcome === 'success') state.release.resolve();
    });
    client = ClientProxyFactory.create({ transport: Transport.TCP, options: { host: '127.0.0.1', port } });
    await client.connect();
  });
  afterAll(async () => {
    await client?.close();
    await service?.close();
  });

  it('runs each copy as a call of its own under the policy', async () => {
    await expect(lastValueFrom(client.send('fanned.guarded', {}).pipe(toArray()))).resolves.toEqual([1, 2]);
    expect(state.signals).toHaveLength(2);
    expect(state.signals.every((s) => s instanceof AbortSignal)).toBe(true);
    expect(new Set(state.signals).size).toBe(2);
    expect(calls('guarded')).toEqual(['success', 'success']);
    expect((await resilience.admin.inspect({ policy: 'guarded' }))[0]!.breaker).toMatchObject({ calls: 2 });
  });

  it("retries the copy whose call is still running under its own policy once the other copy's call has ended", async () => {
    // copy 1: attempt 1 waits, copy 2: attempt 2 succeeds; then attempt 1 fails and copy 1 retries: attempt 3
    await expect(lastValueFrom(client.send('fanned.retrying', {}).pipe(toArray()))).resolves.toEqual([2, 3]);
    expect(state.signals).toHaveLength(3);
    expect(new Set(state.signals).size).toBe(3);
    // two calls and one retry: the retry is not a call nested in the first one
    expect(calls('retrying')).toEqual(['success', 'success']);
    expect(events.filter((e) => e.type === 'retry')).toHaveLength(1);
  });
});

describe("a user's fan-out interceptor around a @Resilient WebSocket handler (socket.io)", () => {
  let app: INestApplication;
  let socket: Socket;

  beforeAll(async () => {
    const port = await freePort();
    const moduleRef = await Test.createTestingModule({
      imports: [resilienceModule()],
      providers: [FannedGateway],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    app.useWebSocketAdapter(new IoAdapter(app));
    await app.listen(port, '127.0.0.1');
    app.get(Resilience).on((e) => events.push(e));
    socket = io(`http://127.0.0.1:${port}`, { transports: ['websocket'], reconnection: false });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('connect_error', reject);
    });
  });
  afterAll(async () => {
    socket?.close();
    await app?.close();
  });

  it('runs each copy as a call of its own under the policy', async () => {
    const ack = await new Promise((resolve) => socket.emit('guarded', null, resolve));
    expect([1, 2]).toContain(ack);
    expect(state.signals).toHaveLength(2);
    expect(state.signals.every((s) => s instanceof AbortSignal)).toBe(true);
    expect(new Set(state.signals).size).toBe(2);
    expect(calls('guarded')).toEqual(['success', 'success']);
  });
});

describe.each([
  ['@Resilient on the method', LateCopyHandlers],
  ['@Resilient on the class and the method', DoublyBoundLateCopyHandlers],
])(
  "a user's interceptor that subscribes a second copy while the first one's call runs, over TCP (%s)",
  (_, controller) => {
    let service: INestMicroservice;
    let client: ClientProxy;

    beforeAll(async () => {
      const port = await freePort();
      const moduleRef = await Test.createTestingModule({
        imports: [resilienceModule()],
        controllers: [controller],
      }).compile();
      service = moduleRef.createNestMicroservice({
        transport: Transport.TCP,
        options: { host: '127.0.0.1', port },
        logger: false,
      });
      await service.listen();
      service.get(Resilience).on((e) => events.push(e));
      client = ClientProxyFactory.create({ transport: Transport.TCP, options: { host: '127.0.0.1', port } });
      await client.connect();
    });
    afterAll(async () => {
      await client?.close();
      await service?.close();
    });

    it('runs the late copy as a call of its own under the policy, never nested in the first', async () => {
      const answers = await lastValueFrom(client.send<number>('late.guarded', {}).pipe(toArray()));
      expect(answers.sort()).toEqual([1, 2]);
      expect(state.signals).toHaveLength(2);
      expect(state.signals.every((s) => s instanceof AbortSignal)).toBe(true);
      expect(new Set(state.signals).size).toBe(2);
      expect(calls('guarded')).toEqual(['success', 'success']);
    });
  },
);
