import type { Clock } from '../time/clock';
import type { CallContext } from '../resilience-types';

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

  /** Aborts the attempt's signal (if anyone holds it) once; later calls are ignored. */
  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }
}
