import {
  ON_ABORT,
  RUN_SETTLED,
  type AbortHook,
  type CallContext,
  type CallSettler,
  type Resilience,
  type RunOptions,
} from '@ballast/core';
import { from, type Observable, type Subscriber, type Subscription } from 'rxjs';

/**
 * An observable run through a policy and replayed to one subscriber (a handler under the interceptor, an
 * Observable-returning provider method), through `call`, made beforehand (the caller records it before the first
 * attempt starts). Each attempt subscribes the source afresh; once the call succeeds, the subscriber gets every value
 * the winning attempt emitted, in order, then `complete` (HTTP uses the last one); a failed call gives it the error.
 *
 * Nothing in between is a Promise: core calls the attempt's `then` and the call's settler directly, so a request
 * costs no promise, reaction or microtask hop of Ballast's own beyond what the pipeline itself needs (on Node 20
 * each promise also pays the AsyncLocalStorage hooks). Core accepts thenables that call back at once.
 */
export function startObservable(
  resilience: Resilience,
  source: () => Observable<unknown>,
  options: RunOptions<unknown>,
  call: ObservableCall,
): ObservableCall {
  resilience[RUN_SETTLED]((ctx) => new ObservableAttempt(source(), ctx, call), options, call);
  return call;
}

/**
 * Hands the call's end to the subscriber — after tearing down every attempt still subscribed. Once the call has
 * settled, an attempt that has not ended is abandoned whatever ended the call (its timeout, a lost hedge race, the
 * client gone, the deadline), even if nothing unsubscribed it on abort.
 */
export class ObservableCall implements CallSettler {
  /** The call has ended (a later unsubscribe has nothing left to cancel); set before the subscriber hears it. */
  done = false;
  /** The attempts that were still running when they started, newest first (linked through `nextStarted`). */
  started: ObservableAttempt | undefined = undefined;

  constructor(private readonly subscriber: Subscriber<unknown>) {}

  settled(ok: boolean, result: unknown): void {
    this.done = true;
    for (let a = this.started; a !== undefined; a = a.nextStarted) a.abandon();
    this.started = undefined;
    if (!ok) return this.subscriber.error(result);
    for (const value of result as unknown[]) this.subscriber.next(value);
    this.subscriber.complete();
  }
}

/** rxjs's own way with an error nobody can handle (a teardown that throws): thrown on its own, later. */
function reportLater(error: unknown): void {
  setTimeout(() => {
    throw error;
  });
}

/**
 * One attempt: subscribes its observable at once — inside the attempt's context frame, so the handler's work sees
 * `currentSignal()`, the deadline and the criticality — gathers what it emits, and reports the outcome when core
 * calls `then` (at once if it is already known). An aborted attempt — timeout, lost hedge race, client gone — tears
 * the subscription down at once, which cancels observable work such as an interval or an HttpService request. The
 * abort is heard through core's internal `ON_ABORT` hook (core runs every attempt with its own context, which has
 * it), not `ctx.signal`: reading the signal makes core create an AbortController for the attempt (with its listener
 * ≈ 8 µs on Node 20), the hook costs nothing, so every handler gets it whatever its return type. The object is its
 * own rxjs observer and abort hook, so an attempt allocates no closures.
 */
class ObservableAttempt implements AbortHook {
  readonly #values: unknown[] = [];
  /** 0 running, 1 completed, 2 failed (`#error` holds why), 3 abandoned after the call settled. */
  #state = 0;
  #error: unknown = undefined;
  #onValues: ((values: unknown[]) => void) | undefined = undefined;
  #onError: ((error: unknown) => void) | undefined = undefined;
  #subscription: Subscription | undefined = undefined;
  /** The attempt started before this one on the same call and still running then. */
  nextStarted: ObservableAttempt | undefined = undefined;

  constructor(source: Observable<unknown>, ctx: CallContext, call: ObservableCall) {
    this.#subscription = source.subscribe(this);
    if (this.#state !== 0) return;
    if (call.done) {
      this.abandon(); // the call ended while the source subscribed: nothing will wait for this attempt
      return;
    }
    this.nextStarted = call.started;
    call.started = this;
    (ctx as CallContext & { [ON_ABORT](hook: AbortHook): void })[ON_ABORT](this);
  }

  /** Core aborted the attempt (its timeout, a lost hedge race, the client gone): stop the source, fail it. */
  attemptAborted(reason: unknown): void {
    if (this.#state !== 0) return;
    try {
      this.#subscription!.unsubscribe();
    } finally {
      this.error(reason);
    }
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

  /** The call settled without this attempt: stop its source, report nothing (core has moved on). */
  abandon(): void {
    if (this.#state !== 0) return;
    this.#state = 3;
    this.#detach();
    try {
      this.#subscription!.unsubscribe();
    } catch (error) {
      reportLater(error); // the other attempts are still stopped, and the call still answered
    }
  }

  #detach(): void {
    this.#onValues = this.#onError = undefined;
  }
}

/**
 * One attempt of an Observable-returning wrapped handler: subscribes, gathers what it emits, and resolves with an
 * Observable of those values, which Nest answers with as it would the handler's own (its last value; an error if
 * none). The attempt's abort (timeout, deadline, disconnect, lost hedge) unsubscribes.
 */
export function collect(source: Observable<unknown>, signal: AbortSignal): Promise<Observable<unknown>> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const values: unknown[] = [];
    let subscription: Subscription | undefined = undefined;
    const onAbort = (): void => {
      subscription?.unsubscribe();
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    subscription = source.subscribe({
      next: (value) => values.push(value),
      error: (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
      complete: () => {
        signal.removeEventListener('abort', onAbort);
        resolve(from(values));
      },
    });
    if (signal.aborted) subscription.unsubscribe();
  });
}
