import 'reflect-metadata';
import { Reflector } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import {
  Resilience,
  ResiliencePolicy,
  RetryStrategy,
  TimeoutStrategy,
  currentSignal,
  isResilienceError,
} from '@ballast/core';
import { FakeClock } from '@ballast/testing';
import { Observable, defer, lastValueFrom, of, throwError, toArray } from 'rxjs';
import type { Observable as TypeOnlyObservable } from 'rxjs';
import { clientDisconnectSignal } from './client-disconnect';
import { Resilient } from './resilient.decorator';
import { ResilienceInterceptor } from './resilience.interceptor';
import { StreamGate } from './stream-gate';

/** A message handler as a microservice (rpc) or gateway (ws) would have it: no HTTP request anywhere. */
class OrdersHandler {
  /** Typed as Observable (a value import): an aborted attempt unsubscribes it. */
  @Resilient('orders')
  onMessage(): Observable<unknown> {
    return of();
  }

  plain(): void {}
}

function contextFor(type: 'rpc' | 'ws', method: keyof OrdersHandler): ExecutionContextHost {
  const context = new ExecutionContextHost([{ id: 1 }, {}], OrdersHandler, OrdersHandler.prototype[method]);
  context.setType(type);
  return context;
}

describe('ResilienceInterceptor outside HTTP', () => {
  let clock: FakeClock;
  let resilience: Resilience;
  let interceptor: ResilienceInterceptor;

  beforeEach(() => {
    clock = new FakeClock();
    resilience = new Resilience({
      clock,
      policies: [
        new ResiliencePolicy({
          name: 'orders',
          strategies: [
            new RetryStrategy({ maxAttempts: 3, backoff: { base: 10, max: 10, jitter: 'none' } }),
            new TimeoutStrategy({ timeout: '1s' }),
          ],
        }),
      ],
    });
    const streams = new StreamGate(resilience);
    interceptor = new ResilienceInterceptor(resilience, new Reflector(), streams, {});
  });

  it.each(['rpc', 'ws'] as const)(
    'runs a %s handler under its policy, retrying and replaying every value',
    async (type) => {
      let calls = 0;
      const handler = defer(() => (++calls < 2 ? throwError(() => ({ code: 'ECONNRESET' })) : of('a', 'b')));
      const values = lastValueFrom(
        interceptor.intercept(contextFor(type, 'onMessage'), { handle: () => handler }).pipe(toArray()),
      );
      await clock.advance(10);
      expect(await values).toEqual(['a', 'b']);
      expect(calls).toBe(2);
    },
  );

  it('passes undecorated handlers through untouched', async () => {
    const handler = of(1);
    const result = interceptor.intercept(contextFor('rpc', 'plain'), { handle: () => handler });
    expect(result).toBe(handler);
  });

  it('gives the handler a signal that a timeout aborts, and tears its observable down', async () => {
    let signal: AbortSignal | undefined;
    let tornDown = 0;
    const handler = new Observable<never>(() => {
      signal = currentSignal();
      return () => tornDown++;
    });
    const outcome = lastValueFrom(
      interceptor.intercept(contextFor('rpc', 'onMessage'), { handle: () => handler }),
    ).catch((e: unknown) => e);
    for (let i = 0; i < 3; i++) await clock.advance(1010); // three attempts, each timing out
    const error = await outcome;
    expect(isResilienceError(error) && error.code).toBe('attempt_timeout');
    expect(signal?.aborted).toBe(true);
    expect(tornDown).toBe(3);
  });

  it('aborts the call when the consumer unsubscribes first', async () => {
    let signal: AbortSignal | undefined;
    const handler = new Observable<never>(() => {
      signal = currentSignal();
    });
    const subscription = interceptor
      .intercept(contextFor('rpc', 'onMessage'), { handle: () => handler })
      .subscribe({
        error: () => {},
      });
    await clock.advance(0);
    expect(signal?.aborted).toBe(false);
    subscription.unsubscribe();
    expect(signal?.aborted).toBe(true);
  });
});

/** A DTO class as a declared return type: never an Observable. */
class ProductDto {
  sku = '';
}

/** HTTP handlers with every kind of `design:returntype` the interceptor has to decide on. */
class ProductsHandler {
  @Resilient('orders')
  async promised(): Promise<number> {
    return 1;
  }

  @Resilient('orders')
  dto(): ProductDto {
    return new ProductDto();
  }

  @Resilient('orders')
  text(): string {
    return '';
  }

  @Resilient('orders')
  declared(): Observable<number> {
    return of(1);
  }

  // No annotation on purpose: `design:returntype` is undefined.
  @Resilient('orders')
  inferred() {
    return of(1);
  }

  // Type-only import: `design:returntype` is Object.
  @Resilient('orders')
  typeOnly(): TypeOnlyObservable<number> {
    return of(1);
  }
}

describe('ResilienceInterceptor: no attempt pays for an AbortController', () => {
  const Original = globalThis.AbortController;
  let created = 0;
  let interceptor: ResilienceInterceptor;
  /** One keep-alive connection: its disconnect signal is created once, before counting starts. */
  const req = { socket: { once: () => undefined, destroyed: false }, headers: {} };

  beforeAll(() => {
    clientDisconnectSignal(req);
    globalThis.AbortController = class extends Original {
      constructor() {
        super();
        created++;
      }
    };
  });
  afterAll(() => {
    globalThis.AbortController = Original;
  });
  beforeEach(() => {
    const resilience = new Resilience({
      clock: new FakeClock(),
      policies: [
        new ResiliencePolicy({ name: 'orders', strategies: [new TimeoutStrategy({ timeout: '1s' })] }),
      ],
    });
    interceptor = new ResilienceInterceptor(resilience, new Reflector(), new StreamGate(resilience), {});
  });

  /** Controllers created by one HTTP call whose handler settles asynchronously, as Nest's always does. */
  async function controllersFor(method: keyof ProductsHandler): Promise<number> {
    const context = new ExecutionContextHost([req, {}], ProductsHandler, ProductsHandler.prototype[method]);
    context.setType('http');
    const source = defer(() => Promise.resolve(1));
    const before = created;
    await lastValueFrom(interceptor.intercept(context, { handle: () => source }));
    return created - before;
  }

  // Every attempt is unsubscribed on abort through core's ON_ABORT hook, which needs no AbortController: the
  // handler's declared return type changes nothing.
  it.each(['promised', 'dto', 'text', 'declared', 'inferred', 'typeOnly'] as const)(
    'creates none, whatever the declared return type (%s)',
    async (method) => {
      expect(await controllersFor(method)).toBe(0);
    },
  );
});
