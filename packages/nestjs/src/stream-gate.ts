import { Injectable } from '@nestjs/common';
import { Resilience, type StreamPermit } from '@ballast/core';
import { Observable, type Subscription } from 'rxjs';
import type { ResilienceBinding } from './resilience-binding';
import type { CallRoute } from './call-route';

export type { StreamPermit };

/**
 * Breaker-only gating for streams (SPEC §9): opening an async generator or an `@Sse()` observable is admitted by the
 * policy's circuit breaker (and refused while forced open); a failure mid-stream counts as a failure. Retry,
 * timeout, bulkhead, rate limit and hedge never apply: a stream is long-lived and cannot be replayed. Admission is
 * core's `Resilience.admitStream`, so streams emit the same events and follow the same store fail-open rule as calls.
 */
@Injectable()
export class StreamGate {
  constructor(private readonly resilience: Resilience) {}

  /** Admits one stream or rejects like a run would (`circuit_open`, `resilience_forced_open`, …). */
  acquire(policyName: string, route: string | undefined): Promise<StreamPermit> {
    return this.resilience.admitStream(policyName, { route });
  }

  /** An observable whose subscription is gated under `route` (the call's: call-route.ts); for `@Sse()` handlers. */
  gateObservable<T>(
    binding: ResilienceBinding,
    route: string | undefined,
    open: () => Observable<T>,
  ): Observable<T> {
    return new Observable<T>((subscriber) => {
      let inner: Subscription | undefined;
      let permit: StreamPermit | undefined;
      let closed = false;
      this.acquire(binding.policy, route).then(
        (p) => {
          permit = p;
          if (closed) return p.settle(undefined, true);
          inner = open().subscribe({
            next: (value) => subscriber.next(value),
            error: (error: unknown) => {
              p.settle(error);
              subscriber.error(error);
            },
            complete: () => {
              p.settle();
              subscriber.complete();
            },
          });
        },
        (error: unknown) => subscriber.error(error),
      );
      return () => {
        closed = true;
        inner?.unsubscribe();
        permit?.settle(undefined, true);
      };
    });
  }

  /**
   * Wraps an async-generator method's result; the gate is consulted when iteration starts, under `route` (the call's)
   * or, when the call has no route because its route function failed, that failure (thrown, no permit taken).
   */
  async *gateIterable<T>(
    binding: ResilienceBinding,
    route: CallRoute,
    open: () => AsyncIterable<T>,
  ): AsyncGenerator<T, void, undefined> {
    if (!route.ok) throw route.error;
    const permit = await this.acquire(binding.policy, route.route);
    let failed = false;
    try {
      yield* open();
    } catch (error) {
      failed = true;
      permit.settle(error);
      throw error;
    } finally {
      // Reaching here without an error: either completed, or the consumer stopped early (return()/break).
      if (!failed) permit.settle(undefined, false);
    }
  }
}
