import {
  RUN_SETTLED,
  type CallContext,
  type CallSettler,
  type Resilience,
  type RunOptions,
} from '@ballast/core';
import type { Observable, Subscriber, Subscription } from 'rxjs';

/**
 * An observable run through a policy and replayed to one subscriber (a handler under the interceptor, an
 * Observable-returning provider method). Each attempt subscribes the source afresh; once the call succeeds, the
 * subscriber gets every value the winning attempt emitted, in order, then `complete` (HTTP uses the last one);
 * a failed call gives it the error.
 *
 * Nothing in between is a Promise: core calls the attempt's `then` and the call's settler directly, so a request
 * costs no promise, reaction or microtask hop of Ballast's own beyond what the pipeline itself needs (on Node 20
 * each promise also pays the AsyncLocalStorage hooks). Core accepts thenables that call back at once.
 */
export function runObservable(
  resilience: Resilience,
  source: () => Observable<unknown>,
  options: RunOptions<unknown>,
  cancelOnAbort: boolean,
  subscriber: Subscriber<unknown>,
): ObservableCall {
  const call = new ObservableCall(subscriber);
  resilience[RUN_SETTLED]((ctx) => new ObservableAttempt(source(), ctx, cancelOnAbort), options, call);
  return call;
}

/** Hands the call's end to the subscriber. */
export class ObservableCall implements CallSettler {
  /** The call has ended (a later unsubscribe has nothing left to cancel). */
  done = false;

  constructor(private readonly subscriber: Subscriber<unknown>) {}

  settled(ok: boolean, result: unknown): void {
    this.done = true;
    if (!ok) return this.subscriber.error(result);
    for (const value of result as unknown[]) this.subscriber.next(value);
    this.subscriber.complete();
  }
}

/**
 * One attempt: subscribes its observable at once — inside the attempt's context frame, so the handler's work sees
 * `currentSignal()`, the deadline and the criticality — gathers what it emits, and reports the outcome when core
 * calls `then` (at once if it is already known). With `cancelOnAbort`, an aborted attempt — timeout, lost hedge
 * race, client gone — tears the subscription down, which cancels observable work such as an HttpService request.
 * It is only worth it for Observable-returning handlers: a Promise cannot be cancelled by unsubscribing, and reading
 * `ctx.signal` makes core create an AbortController for the attempt (~5 µs). The object is its own rxjs observer
 * and abort listener, so an attempt allocates no closures.
 */
class ObservableAttempt {
  readonly #values: unknown[] = [];
  /** 0 running, 1 completed, 2 failed (`#error` holds why). */
  #state = 0;
  #error: unknown = undefined;
  #onValues: ((values: unknown[]) => void) | undefined = undefined;
  #onError: ((error: unknown) => void) | undefined = undefined;
  #signal: AbortSignal | undefined = undefined;
  readonly #subscription: Subscription;

  constructor(source: Observable<unknown>, ctx: CallContext, cancelOnAbort: boolean) {
    this.#subscription = source.subscribe(this);
    if (this.#state !== 0 || !cancelOnAbort) return;
    // Read only when the work is really asynchronous: core creates the signal lazily, on first read.
    const signal = (this.#signal = ctx.signal);
    if (signal.aborted) this.handleEvent();
    else signal.addEventListener('abort', this, { once: true });
  }

  /** Called once by core, right after the attempt function returned. */
  then(onValues: (values: unknown[]) => void, onError: (error: unknown) => void): void {
    if (this.#state === 1) return onValues(this.#values);
    if (this.#state === 2) return onError(this.#error);
    this.#onValues = onValues;
    this.#onError = onError;
  }

  next(value: unknown): void {
    this.#values.push(value);
  }

  error(error: unknown): void {
    if (this.#state !== 0) return;
    this.#state = 2;
    this.#error = error;
    const onError = this.#onError;
    this.#detach();
    onError?.(error);
  }

  complete(): void {
    if (this.#state !== 0) return;
    this.#state = 1;
    const onValues = this.#onValues;
    this.#detach();
    onValues?.(this.#values);
  }

  /** The attempt's signal aborted (this is an EventListener object): stop the source, fail the attempt. */
  handleEvent(): void {
    this.#subscription.unsubscribe();
    this.error(this.#signal!.reason);
  }

  #detach(): void {
    this.#onValues = this.#onError = undefined;
    if (this.#signal !== undefined) this.#signal.removeEventListener('abort', this);
  }
}
