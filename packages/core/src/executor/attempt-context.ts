import type { Clock } from '../time/clock';
import type { CallContext } from '../resilience-types';

/** What {@link ON_ABORT} calls when the attempt is aborted. @internal */
export interface AbortHook {
  attemptAborted(reason: unknown): void;
}

/**
 * Key of an attempt context's internal abort hook, for Ballast's own integrations (`@ballast/nestjs` unsubscribes
 * an Observable handler with it): `ctx[ON_ABORT](hook)` calls `hook.attemptAborted(reason)` once when the attempt
 * is aborted (at once if it already was), without creating the AbortController that reading `ctx.signal` costs
 * (≈ 5 µs on Node 20). One hook per attempt; a second replaces the first. Not public API. @internal
 */
export const ON_ABORT: unique symbol = Symbol('ballast.onAbort');

/**
 * Key of a run option for Ballast's own integrations: `{ ...options, [AMBIENT_SIGNAL]: true }` runs fn in a context
 * frame of its own even when nothing can abort the call, because fn can only get its signal from `currentSignal()`
 * (`@ballast/nestjs`'s decorated provider methods receive nothing new, SPEC §9). Other calls enter a frame only when
 * something can abort them (Invocation.framed). Not public API. @internal
 */
export const AMBIENT_SIGNAL: unique symbol = Symbol('ballast.ambientSignal');

/**
 * The `ctx` one attempt receives, and at the same time the AsyncLocalStorage frame the attempt runs in (so
 * `currentSignal()`, `remainingTime()` and `currentCriticality()` work for code that cannot take `ctx`).
 *
 * The AbortSignal is created only when somebody reads it: on Node 20 an AbortController costs ~4.7 µs, far more
 * than the rest of a call (SPEC §2 "Hot path"). If the attempt was already aborted, the late-created signal is
 * born aborted with the same reason.
 */
export class AttemptContext implements CallContext {
  #controller: AbortController | undefined = undefined;
  #aborted = false;
  #reason: unknown = undefined;
  #hook: AbortHook | undefined = undefined;
  /** The ALS frame view: this attempt is its own "call". */
  readonly call: CallContext = this;

  constructor(
    readonly attempt: number,
    readonly policy: string,
    readonly route: string | undefined,
    readonly deadline: number | undefined,
    readonly deadlineClock: Clock | undefined,
    readonly criticality: number | undefined,
  ) {}

  get signal(): AbortSignal {
    let c = this.#controller;
    if (c === undefined) {
      c = this.#controller = new AbortController();
      if (this.#aborted) c.abort(this.#reason);
    }
    return c.signal;
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  /** See {@link ON_ABORT}. @internal */
  [ON_ABORT](hook: AbortHook): void {
    if (this.#aborted) return hook.attemptAborted(this.#reason);
    this.#hook = hook;
  }

  /** Aborts the attempt's signal (if anyone holds it) and its hook once; later calls are ignored. */
  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
    const hook = this.#hook;
    if (hook === undefined) return;
    this.#hook = undefined;
    try {
      hook.attemptAborted(reason);
    } catch (error) {
      // The abort path (a timeout, a lost hedge) must finish; the hook's error surfaces on its own, as rxjs does.
      setImmediate(() => {
        throw error;
      });
    }
  }
}
