import { Inject, Injectable } from '@nestjs/common';
import {
  ErrorCode,
  Resilience,
  ResilienceError,
  composeClassifier,
  outcomeClass,
  stateKey,
  type BreakerOutcome,
  type BreakerParams,
  type CircuitBreakerStore,
  type ExceptionKind,
} from '@ballast/core';
import { Observable, type Subscription } from 'rxjs';
import { RESILIENCE_BREAKER_STORE } from './resilience.constants';
import { RESILIENCE_MODULE_OPTIONS } from './resilience.module-definition';
import type { ResilienceModuleOptions } from './resilience-module-options.interface';
import type { ResilienceBinding } from './resilient.decorator';

/** The admission of one stream: report how it ended, exactly once (later reports are ignored). */
export interface StreamPermit {
  /** `error` undefined: completed. `cancelled`: the consumer stopped early, which says nothing about health. */
  settle(error?: unknown, cancelled?: boolean): void;
}

const OPEN_PERMIT: StreamPermit = Object.freeze({ settle: () => {} });

const noop = (): void => {};
/** The reason of the forced-open probe; never leaves this file. */
const PROBE_REASON = new Error('ballast stream gate: forced-open probe');
const PROBE_SIGNAL = AbortSignal.abort(PROBE_REASON);

/**
 * Breaker-only gating for streams (SPEC §9): opening an async generator or an `@Sse()` observable is admitted by the
 * policy's circuit breaker (and refused while forced open); a failure mid-stream counts as a failure. Retry,
 * timeout, bulkhead, rate limit and hedge never apply: a stream is long-lived and cannot be replayed.
 *
 * Core has no breaker-only entry point yet, so this talks to the same `CircuitBreakerStore` the `Resilience` uses
 * (the module creates it and hands it over) with the policy's current breaker parameters. Differences from a run:
 * no `breaker_state` events for transitions a stream causes, a failing store admits without local state, and each
 * opening emits one `call` event with outcome `cancelled` (the forced-open probe).
 */
@Injectable()
export class StreamGate {
  readonly #classify: (error: unknown) => ExceptionKind;

  constructor(
    private readonly resilience: Resilience,
    @Inject(RESILIENCE_BREAKER_STORE) private readonly store: CircuitBreakerStore,
    @Inject(RESILIENCE_MODULE_OPTIONS) options: ResilienceModuleOptions,
  ) {
    this.#classify = composeClassifier(options.classify);
  }

  /** Admits one stream or rejects like a run would (`circuit_open`, `resilience_forced_open`, …). */
  async acquire(policyName: string, route: string | undefined): Promise<StreamPermit> {
    const policy = this.resilience.policy(policyName);
    if (policy === undefined) {
      throw new ResilienceError({
        kind: 'configuration',
        code: ErrorCode.UNKNOWN_POLICY,
        message: `Unknown policy '${policyName}'`,
        details: { policy: policyName },
      });
    }
    await this.#refuseIfForcedOpen(policyName, route);
    const cb = policy.circuitBreaker?.options;
    if (cb === undefined) return OPEN_PERMIT;
    const params: BreakerParams = {
      failureRatio: cb.failureRatio,
      samplingWindow: cb.samplingWindow,
      minThroughput: cb.minThroughput,
      breakDuration: cb.breakDuration,
      halfOpenMaxCalls: cb.halfOpenMaxCalls,
    };
    const key = stateKey(policyName, route);
    const clock = this.resilience.clock;
    let admission;
    try {
      admission = await this.store.acquire(key, params, clock.now());
    } catch (cause) {
      if (policy.failOpenOnStoreError) return OPEN_PERMIT;
      throw this.#reject(
        ErrorCode.STORE_UNAVAILABLE,
        'Resilience state store unavailable',
        policyName,
        route,
        undefined,
        cause,
      );
    }
    if (!admission.admitted)
      throw this.#reject(ErrorCode.CIRCUIT_OPEN, 'Circuit open', policyName, route, admission.retryAfter);
    const permit = { generation: admission.generation, lease: admission.lease };
    let settled = false;
    return {
      settle: (error?: unknown, cancelled = false): void => {
        if (settled) return;
        settled = true;
        const outcome = this.#outcome(error, cancelled);
        // Recording is fire-and-forget: a store hiccup must not turn a finished stream into an error.
        void Promise.resolve()
          .then(() => this.store.record(key, params, permit, outcome, clock.now()))
          .catch(() => {});
      },
    };
  }

  /** An observable whose subscription is gated; used for `@Sse()` handlers. */
  gateObservable<T>(binding: ResilienceBinding, open: () => Observable<T>): Observable<T> {
    return new Observable<T>((subscriber) => {
      let inner: Subscription | undefined;
      let permit: StreamPermit | undefined;
      let closed = false;
      this.acquire(binding.policy, binding.route).then(
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

  /** Wraps an async-generator method's result; the gate is consulted when iteration starts. */
  async *gateIterable<T>(
    binding: ResilienceBinding,
    open: () => AsyncIterable<T>,
  ): AsyncGenerator<T, void, undefined> {
    const permit = await this.acquire(binding.policy, binding.route);
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

  /**
   * Forced-open state (per route, or policy-wide including routes first seen later) is internal to core. A run with
   * an already-aborted signal registers the route (a policy-wide force-open then covers it) and ends before any
   * strategy, emitting one `call` event with outcome `cancelled`; `inspect()` then tells whether the route is
   * forced open. `inspect()` reads every key of the policy (remote stores included): acceptable per stream opening,
   * not per call — core should offer a breaker-only admission instead.
   */
  async #refuseIfForcedOpen(policy: string, route: string | undefined): Promise<void> {
    try {
      await this.resilience.run(noop, { policy, route, signal: PROBE_SIGNAL });
    } catch (error) {
      if (error !== PROBE_REASON) throw error;
    }
    const snapshots = await this.resilience.admin.inspect({ policy });
    if (snapshots.some((s) => s.forcedOpen && s.route === route))
      throw this.#reject(ErrorCode.FORCED_OPEN, 'Forced open by an operator', policy, route);
  }

  #outcome(error: unknown, cancelled: boolean): BreakerOutcome {
    if (cancelled) return 'release';
    const cls = outcomeClass(error === undefined ? undefined : this.#classify(error));
    return cls === 'failure' ? 'failure' : cls === 'healthy' ? 'success' : 'release';
  }

  #reject(
    code: string,
    message: string,
    policy: string,
    route: string | undefined,
    retryAfter?: number,
    cause?: unknown,
  ): ResilienceError {
    return new ResilienceError({
      kind: 'infrastructure',
      code,
      message,
      policy,
      ...(route === undefined ? {} : { route }),
      ...(retryAfter === undefined ? {} : { retryAfter }),
      ...(cause === undefined ? {} : { cause }),
    });
  }
}
