import type { ExceptionKind } from '../errors/resilience-error';
import type { ResilienceEvent } from '../events';
import type { CircuitBreakerStore, RateLimitStore } from '../stores/ports';
import type { Clock, Random } from '../time/clock';
import type { TimerQueue } from './timer-queue';

/** What the pipeline needs from its `Resilience`: ports, the shared timer queue, event emission, the stores. */
export interface Engine {
  readonly clock: Clock;
  readonly random: Random;
  readonly classify: (error: unknown) => ExceptionKind;
  readonly timers: TimerQueue;
  /** True while at least one listener is subscribed: events are only built then. */
  listening: boolean;
  /** Run each attempt inside its AsyncLocalStorage frame (`currentSignal()` etc.); see `ResilienceOptions`. */
  readonly ambientContext: boolean;
  emit(event: ResilienceEvent): void;
  /** The configured stores and the in-process stores used when a configured one fails (fail-open). */
  readonly breakerStore: CircuitBreakerStore;
  readonly breakerLocal: CircuitBreakerStore;
  readonly rateStore: RateLimitStore;
  readonly rateLocal: RateLimitStore;
}

export function isPromiseLike<T>(x: unknown): x is PromiseLike<T> {
  return typeof x === 'object' && x !== null && typeof (x as { then?: unknown }).then === 'function';
}
