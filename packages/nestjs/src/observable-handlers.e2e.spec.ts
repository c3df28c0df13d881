import 'reflect-metadata';
import { request as httpRequest, type ClientRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Controller, Get, Injectable, type INestApplication } from '@nestjs/common';
import { HedgeStrategy, ResiliencePolicy, RetryStrategy, TimeoutStrategy } from '@ballast/core';
import { FakeClock } from '@ballast/testing';
import { Observable, of } from 'rxjs';
import type { Observable as TypeOnlyObservable } from 'rxjs';
import request from 'supertest';
import { ADAPTERS, bootApp, eventually, start } from './__tests__/harness';
import { Hedged, Resilient, ResilienceModule } from './index';

/**
 * An Observable-returning handler whose return type the interceptor cannot see (`design:returntype` is not
 * `Observable`: no annotation, a type-only import, an `async` wrapper) must still be unsubscribed when its attempt
 * is abandoned — timeout, lost hedge, client gone — or its work (an interval, an HttpService request) runs on
 * after the answer, and after `app.close()`.
 */
@Injectable()
class Subscriptions {
  readonly open = new Map<string, number>();
  readonly opened = new Map<string, number>();

  /** An observable that never emits and records whether it is still subscribed. */
  hanging(name: string): Observable<never> {
    return new Observable<never>(() => {
      this.opened.set(name, (this.opened.get(name) ?? 0) + 1);
      this.open.set(name, (this.open.get(name) ?? 0) + 1);
      return () => this.open.set(name, this.open.get(name)! - 1);
    });
  }

  stillOpen(name: string): number {
    return this.open.get(name) ?? 0;
  }

  subscribed(name: string): number {
    return this.opened.get(name) ?? 0;
  }

  get anyOpen(): boolean {
    return [...this.open.values()].some((n) => n > 0);
  }
}

@Controller('o')
class ObservableController {
  hedgedCalls = 0;

  constructor(private readonly subs: Subscriptions) {}

  // No return type annotation, on purpose: TypeScript emits `design:returntype` undefined.
  @Get('inferred')
  @Resilient('slow')
  inferred() {
    return this.subs.hanging('inferred');
  }

  // A type-only import: TypeScript emits `design:returntype` Object.
  @Get('type-only')
  @Resilient('slow')
  typeOnly(): TypeOnlyObservable<never> {
    return this.subs.hanging('type-only');
  }

  @Get('declared')
  @Resilient('slow')
  declared(): Observable<never> {
    return this.subs.hanging('declared');
  }

  // Declared (inferred) Promise, resolving to an Observable: Nest subscribes what the promise resolves to.
  @Get('async')
  @Resilient('slow')
  async viaAsync(): Promise<Observable<never>> {
    await Promise.resolve();
    return this.subs.hanging('async');
  }

  @Get('retried')
  @Resilient('retry-slow')
  retried() {
    return this.subs.hanging('retried');
  }

  @Get('hedged')
  @Hedged('hedged')
  hedged() {
    return ++this.hedgedCalls === 1 ? this.subs.hanging('hedged') : of({ attempt: this.hedgedCalls });
  }

  @Get('plain')
  @Resilient('plain')
  plain() {
    return this.subs.hanging('plain');
  }
}

function policies(): ResiliencePolicy[] {
  return [
    new ResiliencePolicy({ name: 'slow', strategies: [new TimeoutStrategy({ timeout: '1s' })] }),
    new ResiliencePolicy({
      name: 'retry-slow',
      strategies: [
        new RetryStrategy({ maxAttempts: 2, backoff: { base: 500, max: 500, jitter: 'none' } }),
        new TimeoutStrategy({ timeout: '1s' }),
      ],
    }),
    new ResiliencePolicy({
      name: 'hedged',
      strategies: [],
      hedge: new HedgeStrategy({ delay: 100, maxAttempts: 2 }),
    }),
    new ResiliencePolicy({ name: 'plain', strategies: [] }),
  ];
}

describe.each(ADAPTERS)(
  'Observable handlers are unsubscribed when their attempt is abandoned (%s)',
  (adapter) => {
    let clock: FakeClock;
    let app: INestApplication;
    let subs: Subscriptions;
    let closed: boolean;
    const http = () => request(app.getHttpServer());

    beforeEach(async () => {
      clock = new FakeClock();
      closed = false;
      app = await bootApp(adapter, {
        imports: [ResilienceModule.forRoot({ policies: policies(), clock })],
        controllers: [ObservableController],
        providers: [Subscriptions],
      });
      subs = app.get(Subscriptions);
    });
    afterEach(async () => {
      if (closed) return;
      await clock.advance(10_000); // a failed test may leave a request waiting for its timeout: let it answer
      await app.close();
    });

    it.each([
      ['inferred', 'no return type annotation'],
      ['type-only', 'Observable imported as a type only'],
      ['declared', 'a declared Observable'],
      ['async', 'an async handler resolving to an Observable'],
    ])('tears a timed-out %s handler down (%s)', async (name) => {
      const pending = start(http().get(`/o/${name}`));
      await eventually(() => subs.subscribed(name) === 1);
      await clock.advance(1000);
      const res = await pending;
      expect(res.status).toBe(504);
      expect(res.body).toMatchObject({ code: 'attempt_timeout' });
      expect(subs.stillOpen(name)).toBe(0);
      await app.close();
      closed = true;
      expect(subs.anyOpen).toBe(false);
    });

    it('tears a timed-out attempt down at its timeout, not when the retry starts', async () => {
      const pending = start(http().get('/o/retried'));
      await eventually(() => subs.subscribed('retried') === 1);
      await clock.advance(1000); // attempt 1 times out; the retry waits 500 ms
      await eventually(() => subs.stillOpen('retried') === 0);
      expect(subs.subscribed('retried')).toBe(1);
      await clock.advance(500);
      await eventually(() => subs.subscribed('retried') === 2);
      await clock.advance(1000);
      expect((await pending).status).toBe(504);
      expect(subs.stillOpen('retried')).toBe(0);
    });

    it('tears the losing attempt of a hedge down', async () => {
      const pending = start(http().get('/o/hedged'));
      await eventually(() => subs.subscribed('hedged') === 1);
      await clock.advance(100); // the hedge fires; attempt 2 answers at once
      const res = await pending;
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ attempt: 2 });
      expect(subs.stillOpen('hedged')).toBe(0);
    });
  },
);

describe.each(ADAPTERS)(
  'an unannotated Observable handler and a client disconnect (%s, real sockets)',
  (adapter) => {
    let app: INestApplication;
    let subs: Subscriptions;

    beforeEach(async () => {
      app = await bootApp(
        adapter,
        {
          imports: [ResilienceModule.forRoot({ policies: policies() })],
          controllers: [ObservableController],
          providers: [Subscriptions],
        },
        { listen: true },
      );
      subs = app.get(Subscriptions);
    });
    afterEach(async () => {
      await app.close();
    });

    it('is unsubscribed when the client goes away', async () => {
      const port = (app.getHttpServer().address() as AddressInfo).port;
      const req: ClientRequest = httpRequest({ host: '127.0.0.1', port, path: '/o/plain', agent: false });
      req.on('error', () => {}); // the socket is destroyed on purpose
      req.end();
      await eventually(() => subs.subscribed('plain') === 1, 100_000);
      req.destroy();
      await eventually(() => subs.stillOpen('plain') === 0, 100_000);
    });
  },
);
