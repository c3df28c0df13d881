import 'reflect-metadata';
import type { ClientRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Controller, Get, Inject, Injectable, type INestApplication } from '@nestjs/common';
import {
  Resilience,
  ResiliencePolicy,
  TimeoutStrategy,
  currentSignal,
  type ResilienceEvent,
} from '@ballast/core';
import { Test } from '@nestjs/testing';
import { FakeClock } from '@ballast/testing';
// A value import: `design:returntype` must see the Observable class for the method to be wrapped lazily.
import { Observable } from 'rxjs';
import request from 'supertest';
import { ADAPTERS, bootApp, deferred, start, type Deferred, openRequest } from './__tests__/harness';
import { ClientClosedRequestError } from './client-disconnect';
import { Resilient, ResilienceModule } from './index';

/**
 * A decorated handler runs inside `resilience.run`; a decorated provider method it calls runs in a nested
 * `resilience.run`. When the handler's attempt is aborted (its timeout, the client's disconnect), the provider's
 * call must be aborted with it: its `currentSignal()` is what the provider hands to `fetch` or a driver.
 */
const CLOCK = Symbol('clock');

function policies(): ResiliencePolicy[] {
  return [
    new ResiliencePolicy({ name: 'handler', strategies: [new TimeoutStrategy({ timeout: 50 })] }),
    new ResiliencePolicy({ name: 'plain', strategies: [] }),
  ];
}

@Injectable()
class Downstream {
  signals: AbortSignal[] = [];
  entered: Deferred<void> = deferred();
  aborted: Deferred<unknown> = deferred();
  finished = 0;

  constructor(@Inject(CLOCK) private readonly clock: FakeClock | undefined) {}

  /** Long work that honours its signal; `finished` counts runs that completed anyway. */
  @Resilient('plain')
  async fetch(): Promise<string> {
    const signal = currentSignal()!;
    this.signals.push(signal);
    signal.addEventListener('abort', () => this.aborted.resolve(signal.reason), { once: true });
    this.entered.resolve();
    if (this.clock !== undefined) await this.clock.sleep(5000, signal);
    else
      await new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
    this.finished++;
    return 'done';
  }

  @Resilient('plain')
  stream(): Observable<string> {
    return new Observable<string>(() => {
      this.entered.resolve();
      return () => this.aborted.resolve('unsubscribed');
    });
  }
}

@Controller()
class GatewayController {
  constructor(private readonly downstream: Downstream) {}

  @Get('decorated')
  @Resilient('handler')
  decorated(): Promise<string> {
    return this.downstream.fetch();
  }

  @Get('decorated-observable')
  @Resilient('handler')
  decoratedObservable(): Observable<string> {
    return this.downstream.stream();
  }

  @Get('undecorated')
  undecorated(): Promise<string> {
    return this.downstream.fetch();
  }
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const callEvents = (events: ResilienceEvent[]) =>
  events.flatMap((e) => (e.type === 'call' ? [{ policy: e.policy, outcome: e.outcome }] : []));

describe.each(ADAPTERS)('a decorated provider under a decorated handler (%s)', (adapter) => {
  let clock: FakeClock;
  let app: INestApplication;
  let downstream: Downstream;
  let events: ResilienceEvent[];

  beforeEach(async () => {
    clock = new FakeClock();
    app = await bootApp(adapter, {
      imports: [ResilienceModule.forRoot({ policies: policies(), clock })],
      controllers: [GatewayController],
      providers: [Downstream, { provide: CLOCK, useValue: clock }],
    });
    downstream = app.get(Downstream);
    events = [];
    app.get(Resilience).on((e) => events.push(e));
  });
  afterEach(async () => {
    await app.close();
  });

  it("aborts the provider's signal when the handler's attempt times out", async () => {
    const res = start(request(app.getHttpServer()).get('/decorated'));
    await downstream.entered.promise;
    await clock.advance(50);
    expect(await within(downstream.aborted.promise, 5000, "the provider's abort")).toMatchObject({
      code: 'attempt_timeout',
    });
    expect((await res).status).toBe(504);
    await clock.advance(5000);
    expect(downstream.finished).toBe(0);
    expect(callEvents(events)).toEqual([
      { policy: 'plain', outcome: 'cancelled' },
      { policy: 'handler', outcome: 'failure' },
    ]);
  });

  it("unsubscribes a provider's Observable when the handler's attempt times out", async () => {
    const res = start(request(app.getHttpServer()).get('/decorated-observable'));
    await downstream.entered.promise;
    await clock.advance(50);
    expect(await within(downstream.aborted.promise, 5000, 'the teardown')).toBe('unsubscribed');
    expect((await res).status).toBe(504);
  });

  it('links nothing when no call encloses the provider: its run gets no signal', async () => {
    const run = jest.spyOn(app.get(Resilience), 'run');
    const res = start(request(app.getHttpServer()).get('/undecorated'));
    await downstream.entered.promise;
    expect(run).toHaveBeenCalledTimes(1);
    expect(run.mock.calls[0]![1]).not.toHaveProperty('signal');
    await clock.advance(5000);
    expect((await res).status).toBe(200);
    expect(downstream.finished).toBe(1);
  });

  it('leaves a provider called directly (outside any call) as it was', async () => {
    const done = downstream.fetch();
    await downstream.entered.promise;
    await clock.advance(5000);
    await expect(done).resolves.toBe('done');
    expect(downstream.signals[0]!.aborted).toBe(false);
  });
});

describe.each(ADAPTERS)('client disconnect reaches a decorated provider (%s, real sockets)', (adapter) => {
  let app: INestApplication;
  let downstream: Downstream;
  let port: number;

  beforeEach(async () => {
    app = await bootApp(
      adapter,
      {
        imports: [
          ResilienceModule.forRoot({
            policies: [
              new ResiliencePolicy({ name: 'plain', strategies: [] }),
              new ResiliencePolicy({ name: 'handler', strategies: [] }),
            ],
          }),
        ],
        controllers: [GatewayController],
        providers: [Downstream, { provide: CLOCK, useValue: undefined }],
      },
      { listen: true },
    );
    downstream = app.get(Downstream);
    port = (app.getHttpServer().address() as AddressInfo).port;
  });
  afterEach(async () => {
    await app.close();
  });

  const open = (path: string): ClientRequest => openRequest(port, path);

  it("aborts the provider's signal with ClientClosedRequestError when the client goes away", async () => {
    const req = open('/decorated');
    await within(downstream.entered.promise, 5000, 'the provider');
    req.destroy();
    const reason = await within(downstream.aborted.promise, 5000, "the provider's abort");
    expect(reason).toBeInstanceOf(ClientClosedRequestError);
  });
});

describe('an Observable provider method whose consumer unsubscribes early', () => {
  @Injectable()
  class Feed {
    subscribed = 0;
    torn = 0;
    sawAbort: unknown = undefined;
    @Resilient('feed')
    ticks(): Observable<number> {
      return new Observable<number>(() => {
        this.subscribed++;
        const signal = currentSignal();
        signal?.addEventListener('abort', () => (this.sawAbort = signal.reason), { once: true });
        return () => this.torn++;
      });
    }
  }

  it('aborts the call (its work stops, its signal fires) instead of running on until its timeout', async () => {
    const clock = new FakeClock();
    const moduleRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({
          clock,
          policies: [
            new ResiliencePolicy({ name: 'feed', strategies: [new TimeoutStrategy({ timeout: '1h' })] }),
          ],
        }),
      ],
      providers: [Feed],
    }).compile();
    await moduleRef.init();
    const events: ResilienceEvent[] = [];
    moduleRef.get(Resilience).on((e) => events.push(e));
    const feed = moduleRef.get(Feed);
    const subscription = feed.ticks().subscribe();
    await clock.advance(0);
    expect(feed.subscribed).toBe(1);
    subscription.unsubscribe();
    await clock.advance(0);
    expect(feed.torn).toBe(1);
    expect(feed.sawAbort).toBeDefined();
    expect(events.filter((e) => e.type === 'call').map((e) => (e as { outcome: string }).outcome)).toEqual([
      'cancelled',
    ]);
    expect(clock.pendingTimers()).toBe(0);
    await moduleRef.close();
  });
});
