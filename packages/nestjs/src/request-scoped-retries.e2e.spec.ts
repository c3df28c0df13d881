import 'reflect-metadata';
import {
  Controller,
  Get,
  Injectable,
  Scope,
  UseInterceptors,
  type INestApplication,
  type INestMicroservice,
} from '@nestjs/common';
import { ClientProxyFactory, MessagePattern, Transport, type ClientProxy } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { ResiliencePolicy, RetryStrategy, currentSignal } from '@ballast/core';
import { lastValueFrom } from 'rxjs';
import request from 'supertest';
import { ADAPTERS, bootApp, freePort } from './__tests__/harness';
import { RetryOnce } from './__tests__/user-interceptors';
import { CallSignal, ResilienceModule, Resilient } from './index';

/**
 * nestjs-resilience #487: a handler that depends on a request-scoped provider must see that
 * request's instance on every attempt — the policy's retries and the re-subscriptions of a user's retrying
 * interceptor — and the next request a fresh one, never an instance captured by the first call.
 */

interface Seen {
  readonly where: 'handler' | 'provider';
  readonly tag: number;
  readonly self: object;
  readonly signal: AbortSignal | undefined;
}
/** Per test: every attempt seen, and how many handler and provider attempts still fail. */
const state = { seen: [] as Seen[], failures: 0, providerFailures: 0 };
const reset = (): Error => Object.assign(new Error('inventory reset'), { code: 'ECONNRESET' });

@Injectable({ scope: Scope.REQUEST })
class RequestTag {
  static created = 0;
  readonly id = ++RequestTag.created;

  /** A decorated method of the request-scoped provider itself: its retries run on this instance. */
  @Resilient('retrying')
  async lookup(): Promise<number> {
    state.seen.push({ where: 'provider', tag: this.id, self: this, signal: currentSignal() });
    if (state.providerFailures-- > 0) throw reset();
    return this.id;
  }
}

/** The handler's body, shared by the HTTP and RPC controllers (each made request-scoped by its dependency). */
async function handle(
  self: { tag: RequestTag },
  signal: AbortSignal,
): Promise<{ tag: number; lookup: number }> {
  state.seen.push({ where: 'handler', tag: self.tag.id, self, signal });
  if (state.failures-- > 0) throw reset();
  return { tag: self.tag.id, lookup: await self.tag.lookup() };
}

@Controller('scoped')
@UseInterceptors(RetryOnce)
class ScopedController {
  constructor(readonly tag: RequestTag) {}

  @Get()
  @Resilient('retrying')
  get(@CallSignal() signal: AbortSignal): Promise<{ tag: number; lookup: number }> {
    return handle(this, signal);
  }
}

@Controller()
@UseInterceptors(RetryOnce)
class ScopedHandlers {
  constructor(readonly tag: RequestTag) {}

  @MessagePattern('scoped')
  @Resilient('retrying')
  get(_data: unknown, @CallSignal() signal: AbortSignal): Promise<{ tag: number; lookup: number }> {
    return handle(this, signal);
  }
}

const resilienceModule = () =>
  ResilienceModule.forRoot({
    policies: [
      new ResiliencePolicy({
        name: 'retrying',
        strategies: [new RetryStrategy({ maxAttempts: 3, backoff: { base: 1, max: 1, jitter: 'none' } })],
      }),
    ],
  });

interface Target {
  call(): Promise<unknown>;
  close(): Promise<void>;
}

async function httpTarget(adapter: (typeof ADAPTERS)[number]): Promise<Target> {
  const app: INestApplication = await bootApp(adapter, {
    imports: [resilienceModule()],
    controllers: [ScopedController],
    providers: [RequestTag],
  });
  return {
    async call() {
      const res = await request(app.getHttpServer() as never).get('/scoped');
      expect(res.status).toBe(200);
      return res.body as unknown;
    },
    close: () => app.close(),
  };
}

async function tcpTarget(): Promise<Target> {
  const port = await freePort();
  const moduleRef = await Test.createTestingModule({
    imports: [resilienceModule()],
    controllers: [ScopedHandlers],
    providers: [RequestTag],
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
    call: () => lastValueFrom(client.send('scoped', {})),
    async close() {
      await client.close();
      await service.close();
    },
  };
}

const TARGETS: [string, () => Promise<Target>][] = [
  ...ADAPTERS.map((a): [string, () => Promise<Target>] => [`HTTP on ${a}`, () => httpTarget(a)]),
  ['RPC over TCP', tcpTarget],
];

describe.each(TARGETS)('a @Resilient handler with a request-scoped dependency, retried (%s)', (_, boot) => {
  let target: Target;
  const handlerAttempts = () => state.seen.filter((s) => s.where === 'handler');

  beforeAll(async () => {
    target = await boot();
  });
  afterAll(async () => {
    await target?.close();
  });
  beforeEach(() => {
    state.seen = [];
    state.failures = 0;
    state.providerFailures = 0;
  });

  it("runs every attempt of a request on that request's instances, and the next request on fresh ones", async () => {
    // 4 failures: the policy's 3 attempts fail, the user's retry starts a second call whose 2nd attempt succeeds
    state.failures = 4;
    const first = (await target.call()) as { tag: number; lookup: number };
    const attempts = handlerAttempts();
    expect(attempts).toHaveLength(5);
    expect(new Set(attempts.map((a) => a.tag))).toEqual(new Set([first.tag]));
    expect(new Set(attempts.map((a) => a.self)).size).toBe(1);
    // every attempt ran inside a call, each with its own signal
    expect(new Set(attempts.map((a) => a.signal)).size).toBe(5);
    expect(attempts.every((a) => a.signal instanceof AbortSignal)).toBe(true);
    expect(first.lookup).toBe(first.tag);

    state.seen = [];
    const second = (await target.call()) as { tag: number; lookup: number };
    expect(second.tag).not.toBe(first.tag);
    expect(second.lookup).toBe(second.tag);
    expect(handlerAttempts()).toHaveLength(1);
    expect(handlerAttempts()[0]!.self).not.toBe(attempts[0]!.self);
  });

  it("retries a decorated method of the request-scoped provider on the request's own instance", async () => {
    state.providerFailures = 2;
    const answer = (await target.call()) as { tag: number; lookup: number };
    const lookups = state.seen.filter((s) => s.where === 'provider');
    expect(lookups).toHaveLength(3);
    expect(lookups.map((l) => l.tag)).toEqual([answer.tag, answer.tag, answer.tag]);
    expect(new Set(lookups.map((l) => l.self)).size).toBe(1);
    expect(lookups.every((l) => l.signal instanceof AbortSignal)).toBe(true);
    expect(answer.lookup).toBe(answer.tag);
  });
});
