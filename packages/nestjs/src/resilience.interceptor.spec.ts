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
