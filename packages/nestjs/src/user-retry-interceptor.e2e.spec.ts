import 'reflect-metadata';
import {
  Controller,
  Get,
  UseInterceptors,
  type INestApplication,
  type INestMicroservice,
} from '@nestjs/common';
import { ClientProxyFactory, MessagePattern, Transport, type ClientProxy } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import {
  CircuitBreakerStrategy,
  Resilience,
  ResiliencePolicy,
  RetryStrategy,
  type ResilienceEvent,
} from '@ballast/core';
import { lastValueFrom } from 'rxjs';
import request from 'supertest';
import { ADAPTERS, bootApp, freePort } from './__tests__/harness';
import { RetryTwice } from './__tests__/user-interceptors';
import { CallSignal, ResilienceModule, Resilient } from './index';

/**
 * nest #11923: the user's own interceptor retries by re-subscribing `next.handle()`. Listed on
 * the class, it runs outside Ballast (the decorators' interceptor is on the method, and on HTTP the policy wraps the
 * handler itself): each re-subscription must call the handler again under the policy — a new call, with its own
 * attempts, signal and breaker outcome — never the handler bare, and never the policy nested in itself.
 */

/** What the handlers saw, reset per test: each attempt's signal, and how many attempts still fail. */
const state = { signals: [] as (AbortSignal | undefined)[], failures: 0 };
function attempt(signal: AbortSignal | undefined): { attempts: number } {
  state.signals.push(signal);
  if (state.failures-- > 0) throw Object.assign(new Error('inventory reset'), { code: 'ECONNRESET' });
  return { attempts: state.signals.length };
}

@Controller('retried')
@UseInterceptors(RetryTwice)
class RetriedController {
  @Get('guarded')
  @Resilient('guarded')
  guarded(@CallSignal() signal: AbortSignal): { attempts: number } {
    return attempt(signal);
  }

  @Get('retrying')
  @Resilient('retrying')
  retrying(@CallSignal() signal: AbortSignal): { attempts: number } {
    return attempt(signal);
  }

  @Get('fragile')
  @Resilient('fragile')
  fragile(@CallSignal() signal: AbortSignal): { attempts: number } {
    return attempt(signal);
  }
}

/** The same handlers on RPC (no class decorators here: the subclasses below add them). */
class RpcHandlers {
  @MessagePattern('retried.guarded')
  @Resilient('guarded')
  guarded(_data: unknown, @CallSignal() signal: AbortSignal): { attempts: number } {
    return attempt(signal);
  }

  @MessagePattern('retried.retrying')
  @Resilient('retrying')
  retrying(_data: unknown, @CallSignal() signal: AbortSignal): { attempts: number } {
    return attempt(signal);
  }

  @MessagePattern('retried.fragile')
  @Resilient('fragile')
  fragile(_data: unknown, @CallSignal() signal: AbortSignal): { attempts: number } {
    return attempt(signal);
  }
}

@Controller()
@UseInterceptors(RetryTwice)
class RetriedHandlers extends RpcHandlers {}

/**
 * Ballast's interceptor listed twice (the class's `@Resilient` and the method's, whose binding wins), inside the
 * user's retry: each re-subscription is still one call, the policy never nested in itself.
 */
@Controller()
@Resilient('guarded')
@UseInterceptors(RetryTwice)
class DoublyBoundHandlers extends RpcHandlers {}

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

const resilienceModule = () =>
  ResilienceModule.forRoot({
    policies: [
      breaker('guarded', 100), // records outcomes, never trips here
      breaker('fragile', 2),
      new ResiliencePolicy({
        name: 'retrying',
        strategies: [new RetryStrategy({ maxAttempts: 3, backoff: { base: 1, max: 1, jitter: 'none' } })],
      }),
    ],
  });

/** One transport under test: how to call a handler by name, and the status/code of a failed answer. */
interface Target {
  resilience: Resilience;
  call(
    name: string,
  ): Promise<{ ok: true; body: unknown } | { ok: false; status: number; code?: string | undefined }>;
  close(): Promise<void>;
}

async function httpTarget(adapter: (typeof ADAPTERS)[number]): Promise<Target> {
  const app: INestApplication = await bootApp(adapter, {
    imports: [resilienceModule()],
    controllers: [RetriedController],
  });
  return {
    resilience: app.get(Resilience),
    async call(name) {
      const res = await request(app.getHttpServer() as never).get(`/retried/${name}`);
      if (res.status === 200) return { ok: true, body: res.body as unknown };
      return { ok: false, status: res.status, code: (res.body as { code?: string }).code };
    },
    close: () => app.close(),
  };
}

async function tcpTarget(controller: typeof RpcHandlers): Promise<Target> {
  const port = await freePort();
  const moduleRef = await Test.createTestingModule({
    imports: [resilienceModule()],
    controllers: [controller],
  }).compile();
  const service: INestMicroservice = moduleRef.createNestMicroservice({
    transport: Transport.TCP,
    options: { host: '127.0.0.1', port },
    logger: false,
  });
  await service.listen();
  const client: ClientProxy = ClientProxyFactory.create({
    transport: Transport.TCP,
    options: { host: '127.0.0.1', port },
  });
  await client.connect();
  return {
    resilience: service.get(Resilience),
    async call(name) {
      try {
        return { ok: true, body: await lastValueFrom(client.send(`retried.${name}`, {})) };
      } catch (error) {
        const e = error as { statusCode?: number; code?: string };
        return { ok: false, status: e.statusCode ?? 500, code: e.code };
      }
    },
    async close() {
      await client.close();
      await service.close();
    },
  };
}

const TARGETS: [string, () => Promise<Target>][] = [
  ...ADAPTERS.map((a): [string, () => Promise<Target>] => [`HTTP on ${a}`, () => httpTarget(a)]),
  ['RPC over TCP', () => tcpTarget(RetriedHandlers)],
  ['RPC over TCP, @Resilient on the class too', () => tcpTarget(DoublyBoundHandlers)],
];

describe.each(TARGETS)("a user's retrying interceptor around @Resilient handlers (%s)", (_, boot) => {
  let target: Target;
  let events: ResilienceEvent[];
  const calls = (policy: string) =>
    events.flatMap((e) => (e.type === 'call' && e.policy === policy ? [e.outcome] : []));
  const breakerOf = async (policy: string) =>
    (await target.resilience.admin.inspect({ policy }))[0]!.breaker!;

  beforeAll(async () => {
    target = await boot();
    target.resilience.on((e) => events.push(e));
  });
  afterAll(async () => {
    await target?.close();
  });
  beforeEach(() => {
    events = [];
    state.signals = [];
  });

  it('runs the handler under the policy on every re-subscription: one call and one breaker outcome each', async () => {
    state.failures = 100;
    await expect(target.call('guarded')).resolves.toMatchObject({ ok: false, status: 500 });
    // 1 subscription + 2 retries = 3 calls of 1 attempt each, every attempt inside a call with its own signal
    expect(state.signals).toHaveLength(3);
    expect(state.signals.every((s) => s instanceof AbortSignal)).toBe(true);
    expect(new Set(state.signals).size).toBe(3);
    expect(calls('guarded')).toEqual(['failure', 'failure', 'failure']);
    expect(await breakerOf('guarded')).toMatchObject({ state: 'closed', calls: 3 });
  });

  it("composes with the policy's retry: each re-subscription is a new call, and it stops at the first success", async () => {
    state.failures = 4;
    await expect(target.call('retrying')).resolves.toEqual({ ok: true, body: { attempts: 5 } });
    // call 1: attempts 1–3 fail; the user's retry starts call 2: attempt 4 fails, attempt 5 succeeds
    expect(calls('retrying')).toEqual(['failure', 'success']);
    expect(events.filter((e) => e.type === 'retry')).toHaveLength(3);
    expect(state.signals.every((s) => s instanceof AbortSignal)).toBe(true);
    expect(new Set(state.signals).size).toBe(5);
  });

  it('opens the breaker after two failed calls; the next re-subscription is refused, answered 503 circuit_open', async () => {
    state.failures = 100;
    await expect(target.call('fragile')).resolves.toEqual({ ok: false, status: 503, code: 'circuit_open' });
    expect(state.signals).toHaveLength(2);
    expect(calls('fragile')).toEqual(['failure', 'failure', 'rejected']);
    // one transition (an open breaker's snapshot counts no calls)
    const transitions = events.filter((e) => e.type === 'breaker_state');
    expect(transitions).toEqual([expect.objectContaining({ from: 'closed', to: 'open' })]);
    expect(await breakerOf('fragile')).toMatchObject({ state: 'open' });
  });
});
