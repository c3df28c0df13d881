import 'reflect-metadata';
import { UseInterceptors, type INestApplication } from '@nestjs/common';
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
import { io, type Socket } from 'socket.io-client';
import { freePort } from './__tests__/harness';
import { RetryTwice } from './__tests__/user-interceptors';
import { ResilienceModule, Resilient } from './index';

/**
 * nest #11923 on a socket.io gateway: the user's own interceptor, on the gateway class, retries
 * a `@SubscribeMessage` handler by re-subscribing `next.handle()`. Each re-subscription must be a new call under the
 * handler's policy — its own attempts, signal and breaker outcome — never the handler bare, never the policy nested.
 */

/** What the handlers saw, reset per test: each attempt's signal, and how many attempts still fail. */
const state = { signals: [] as (AbortSignal | undefined)[], failures: 0 };
function attempt(): { attempts: number } {
  state.signals.push(currentSignal());
  if (state.failures-- > 0) throw Object.assign(new Error('inventory reset'), { code: 'ECONNRESET' });
  return { attempts: state.signals.length };
}

/** The user's interceptor on the gateway class, outside Ballast's (which the method decorators attach). */
@WebSocketGateway()
@UseInterceptors(RetryTwice)
class StockGateway {
  @SubscribeMessage('guarded')
  @Resilient('guarded')
  guarded(): { attempts: number } {
    return attempt();
  }

  @SubscribeMessage('retrying')
  @Resilient('retrying')
  retrying(): { attempts: number } {
    return attempt();
  }

  @SubscribeMessage('fragile')
  @Resilient('fragile')
  fragile(): { attempts: number } {
    return attempt();
  }
}

const breaker = (name: string, minThroughput: number): ResiliencePolicy =>
  new ResiliencePolicy({
    name,
    strategies: [
      new CircuitBreakerStrategy({
        failureRatio: 0.5,
        samplingWindow: '1m',
        minThroughput,
        breakDuration: '1h',
      }),
    ],
  });

describe("a user's retrying interceptor around @Resilient WebSocket handlers (socket.io)", () => {
  let app: INestApplication;
  let client: Socket;
  let resilience: Resilience;
  let events: ResilienceEvent[];
  const calls = (policy: string) =>
    events.flatMap((e) => (e.type === 'call' && e.policy === policy ? [e.outcome] : []));
  const breakerOf = async (policy: string) => (await resilience.admin.inspect({ policy }))[0]!.breaker!;

  beforeAll(async () => {
    const port = await freePort();
    const moduleRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({
          policies: [
            breaker('guarded', 100), // records outcomes, never trips here
            breaker('fragile', 2),
            new ResiliencePolicy({
              name: 'retrying',
              strategies: [
                new RetryStrategy({ maxAttempts: 3, backoff: { base: 1, max: 1, jitter: 'none' } }),
              ],
            }),
          ],
        }),
      ],
      providers: [StockGateway],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    app.useWebSocketAdapter(new IoAdapter(app));
    await app.listen(port, '127.0.0.1');
    resilience = app.get(Resilience);
    resilience.on((e) => events.push(e));
    client = io(`http://127.0.0.1:${port}`, { transports: ['websocket'], reconnection: false });
    await new Promise<void>((resolve, reject) => {
      client.once('connect', resolve);
      client.once('connect_error', reject);
    });
  });
  afterAll(async () => {
    client?.close();
    await app?.close();
  });
  beforeEach(() => {
    events = [];
    state.signals = [];
  });

  /** The handler's acknowledgement, or the `exception` event Nest's WS filters emit on the socket. */
  function send(event: string): Promise<{ ack?: unknown; exception?: unknown }> {
    return new Promise((resolve) => {
      const onException = (exception: unknown) => resolve({ exception });
      client.once('exception', onException);
      client.emit(event, null, (ack: unknown) => {
        client.off('exception', onException);
        resolve({ ack });
      });
    });
  }

  it('runs the handler under the policy on every re-subscription: one call and one breaker outcome each', async () => {
    state.failures = 100;
    await expect(send('guarded')).resolves.toEqual({
      exception: expect.objectContaining({ status: 'error', message: 'Internal server error' }),
    });
    // 1 subscription + 2 retries = 3 calls of 1 attempt each, every attempt inside a call with its own signal
    expect(state.signals).toHaveLength(3);
    expect(state.signals.every((s) => s instanceof AbortSignal)).toBe(true);
    expect(new Set(state.signals).size).toBe(3);
    expect(calls('guarded')).toEqual(['failure', 'failure', 'failure']);
    expect(await breakerOf('guarded')).toMatchObject({ state: 'closed', calls: 3 });
  });

  it("composes with the policy's retry: each re-subscription is a new call, and it stops at the first success", async () => {
    state.failures = 4;
    await expect(send('retrying')).resolves.toEqual({ ack: { attempts: 5 } });
    // call 1: attempts 1–3 fail; the user's retry starts call 2: attempt 4 fails, attempt 5 succeeds
    expect(calls('retrying')).toEqual(['failure', 'success']);
    expect(events.filter((e) => e.type === 'retry')).toHaveLength(3);
    expect(state.signals.every((s) => s instanceof AbortSignal)).toBe(true);
    expect(new Set(state.signals).size).toBe(5);
  });

  it('opens the breaker after two failed calls; the next re-subscription is refused with circuit_open', async () => {
    state.failures = 100;
    const { exception } = await send('fragile');
    expect(exception).toEqual({
      status: 'error',
      statusCode: 503,
      error: 'Service Unavailable',
      code: 'circuit_open',
      message: expect.any(String),
    });
    expect(JSON.stringify(exception)).not.toContain('fragile');
    expect(state.signals).toHaveLength(2);
    expect(calls('fragile')).toEqual(['failure', 'failure', 'rejected']);
    const transitions = events.filter((e) => e.type === 'breaker_state');
    expect(transitions).toEqual([expect.objectContaining({ from: 'closed', to: 'open' })]);
    expect(await breakerOf('fragile')).toMatchObject({ state: 'open' });
  });
});
