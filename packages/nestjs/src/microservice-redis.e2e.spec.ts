import 'reflect-metadata';
import { Controller, type INestMicroservice } from '@nestjs/common';
import {
  ClientProxyFactory,
  EventPattern,
  MessagePattern,
  Payload,
  Transport,
  type ClientProxy,
} from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import {
  CircuitBreakerStrategy,
  RateLimitStrategy,
  Resilience,
  ResiliencePolicy,
  TimeoutStrategy,
  type ResilienceEvent,
} from '@ballast/core';
import { FakeClock } from '@ballast/testing';
import { Redis } from 'ioredis';
import { lastValueFrom } from 'rxjs';
import { deferred, eventually, type Deferred } from './__tests__/harness';
import {
  REDIS_URL,
  RUN_REDIS_TESTS,
  redisHostPort,
  reportRedisUnreachable,
  requireRedis,
  uniqueChannelPrefix,
} from './__tests__/redis-env';
import { CallSignal, ResilienceModule, Resilient } from './index';

/** Channels of this run only: a shared Redis may serve other runs and test files at once. */
const RUN = uniqueChannelPrefix('ms');
const ch = (name: string): string => `${RUN}.${name}`;
const refused = (): Error => Object.assign(new Error('dependency down'), { code: 'ECONNREFUSED' });

/** Resolves on the signal's abort, never otherwise: a handler that waits on its dependency until cancelled. */
function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) =>
    signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true }),
  );
}

@Controller()
class RedisHandlers {
  signals: AbortSignal[] = [];
  entered: Deferred<void> = deferred();
  fragileCalls = 0;
  ticks: number[] = [];
  fragileEvents = 0;

  @MessagePattern(ch('quote'))
  @Resilient('limited')
  quote(): number {
    return 42;
  }

  @MessagePattern(ch('slow'))
  @Resilient('timed')
  slow(@Payload() _sku: string, @CallSignal() signal: AbortSignal): Promise<never> {
    this.signals.push(signal);
    this.entered.resolve();
    return untilAborted(signal);
  }

  @MessagePattern(ch('fragile'))
  @Resilient('breaker')
  fragile(@Payload() fail: boolean): string {
    this.fragileCalls++;
    if (fail) throw refused();
    return 'ok';
  }

  @EventPattern(ch('tick'))
  @Resilient('limited-events')
  // Payloads typed `unknown`: NestJS 12's @EventPattern types a string topic's payload as `{}`.
  tick(@Payload() n: unknown): void {
    this.ticks.push(n as number);
  }

  // An explicit <string>: NestJS 12 types a string topic's handler as (data, ...args: unknown[]), so a typed
  // second parameter (@CallSignal(), @Ctx()) needs the untyped overload.
  @EventPattern<string>(ch('slow-event'))
  @Resilient('timed')
  slowEvent(@Payload() _n: unknown, @CallSignal() signal: AbortSignal): Promise<never> {
    this.signals.push(signal);
    this.entered.resolve();
    return untilAborted(signal);
  }

  @EventPattern(ch('fragile-event'))
  @Resilient('breaker-events')
  fragileEvent(_event: unknown): void {
    this.fragileEvents++;
    throw refused();
  }
}

const breaker = (name: string): ResiliencePolicy =>
  new ResiliencePolicy({
    name,
    strategies: [
      new CircuitBreakerStrategy({
        failureRatio: 0.5,
        samplingWindow: '1m',
        minThroughput: 2,
        breakDuration: '1h',
      }),
    ],
  });

const limited = (name: string): ResiliencePolicy =>
  new ResiliencePolicy({ name, strategies: [new RateLimitStrategy({ permits: 1, per: '1h' })] });

/** The channels the service subscribes to (requests and events), to wait until Redis has every subscription. */
const CHANNELS = ['quote', 'slow', 'fragile', 'tick', 'slow-event', 'fragile-event'].map(ch);

if (RUN_REDIS_TESTS) {
  /** A real Nest microservice on the REDIS transport, called through a real ClientProxy, over a real Redis. */
  describe('@Resilient on microservice handlers, over Redis', () => {
    let service: INestMicroservice;
    let client: ClientProxy;
    let admin: Redis | undefined;
    let handlers: RedisHandlers;
    let clock: FakeClock;
    let events: ResilienceEvent[];
    const calls = (policy: string) => events.filter((e) => e.type === 'call' && e.policy === policy);

    beforeAll(async () => {
      await requireRedis();
      clock = new FakeClock();
      const moduleRef = await Test.createTestingModule({
        imports: [
          ResilienceModule.forRoot({
            clock,
            policies: [
              limited('limited'),
              limited('limited-events'),
              new ResiliencePolicy({ name: 'timed', strategies: [new TimeoutStrategy({ timeout: 50 })] }),
              breaker('breaker'),
              breaker('breaker-events'),
            ],
          }),
        ],
        controllers: [RedisHandlers],
      }).compile();
      const options = { ...redisHostPort(), retryAttempts: 0 };
      service = moduleRef.createNestMicroservice({ transport: Transport.REDIS, options, logger: false });
      await service.listen();
      handlers = service.get(RedisHandlers);
      service.get(Resilience).on((e) => events.push(e));
      // Nest's Redis server sends its SUBSCRIBEs without waiting for them: wait until Redis has them all.
      admin = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
      await eventually(async () => {
        const counts = (await admin!.pubsub('NUMSUB', ...CHANNELS)) as (string | number)[];
        return counts.filter((_, i) => i % 2 === 1).every((n) => Number(n) >= 1);
      });
      client = ClientProxyFactory.create({ transport: Transport.REDIS, options });
      await client.connect();
    });
    afterAll(async () => {
      await client?.close();
      await service?.close();
      admin?.disconnect();
    });
    beforeEach(() => {
      events = [];
      handlers.signals = [];
      handlers.entered = deferred();
    });

    describe('@MessagePattern', () => {
      it('sends a rate-limit rejection back as an RPC error carrying the code, without policy names', async () => {
        await expect(lastValueFrom(client.send(ch('quote'), {}))).resolves.toBe(42);
        const error: unknown = await lastValueFrom(client.send(ch('quote'), {})).catch((e: unknown) => e);
        expect(error).toEqual({
          status: 'error',
          statusCode: 429,
          error: 'Too Many Requests',
          code: 'rate_limited',
          message: expect.any(String) as unknown,
        });
        expect((error as { message: string }).message).not.toMatch(/\blimited\b/);
      });

      it("aborts the handler's @CallSignal() on the policy's timeout and answers attempt_timeout", async () => {
        const answer = lastValueFrom(client.send(ch('slow'), 'sku-1')).catch((e: unknown) => e);
        await handlers.entered.promise;
        expect(handlers.signals).toHaveLength(1);
        expect(handlers.signals[0]!.aborted).toBe(false);
        await clock.advance(50);
        await expect(answer).resolves.toMatchObject({
          status: 'error',
          statusCode: 504,
          code: 'attempt_timeout',
        });
        expect(handlers.signals[0]!.aborted).toBe(true);
      });

      it('opens the breaker after failures: the next call is refused with circuit_open, the handler not run', async () => {
        for (let i = 0; i < 2; i++) {
          const own: unknown = await lastValueFrom(client.send(ch('fragile'), true)).catch((e: unknown) => e);
          // the handler's own error is not Ballast's: Nest's RPC handling answers it
          expect(own).toMatchObject({ status: 'error' });
          expect(own).not.toHaveProperty('code');
        }
        expect(handlers.fragileCalls).toBe(2);
        const error: unknown = await lastValueFrom(client.send(ch('fragile'), false)).catch(
          (e: unknown) => e,
        );
        expect(error).toMatchObject({ status: 'error', statusCode: 503, code: 'circuit_open' });
        expect(handlers.fragileCalls).toBe(2);
      });
    });

    describe('@EventPattern', () => {
      it('runs each event under the rate limit: the second event is refused, its handler not run', async () => {
        client.emit(ch('tick'), 1);
        await eventually(() => calls('limited-events').length === 1);
        client.emit(ch('tick'), 2);
        await eventually(() => calls('limited-events').length === 2);
        expect(handlers.ticks).toEqual([1]);
        expect(calls('limited-events').map((e) => e.type === 'call' && e.outcome)).toEqual([
          'success',
          'rejected',
        ]);
        expect(events).toContainEqual(
          expect.objectContaining({ type: 'rejected', policy: 'limited-events', code: 'rate_limited' }),
        );
      });

      it("aborts the event handler's @CallSignal() on the policy's timeout", async () => {
        client.emit(ch('slow-event'), 1);
        await handlers.entered.promise;
        expect(handlers.signals[0]!.aborted).toBe(false);
        await clock.advance(50);
        expect(handlers.signals[0]!.aborted).toBe(true);
        await eventually(() => calls('timed').length === 1);
        expect(calls('timed')[0]).toMatchObject({ outcome: 'failure', code: 'attempt_timeout' });
      });

      it("opens the breaker after failing events: later events are refused and the handler isn't run", async () => {
        for (let i = 1; i <= 3; i++) {
          client.emit(ch('fragile-event'), i);
          await eventually(() => calls('breaker-events').length === i);
        }
        expect(handlers.fragileEvents).toBe(2);
        expect(events).toContainEqual(
          expect.objectContaining({ type: 'breaker_state', policy: 'breaker-events', to: 'open' }),
        );
        expect(events).toContainEqual(
          expect.objectContaining({ type: 'rejected', policy: 'breaker-events', code: 'circuit_open' }),
        );
        const [state] = await service.get(Resilience).admin.inspect({ policy: 'breaker-events' });
        expect(state!.breaker!.state).toBe('open');
      });
    });
  });
} else {
  describe('@Resilient on microservice handlers, over Redis', () => reportRedisUnreachable());
}
