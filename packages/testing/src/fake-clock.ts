/**
 * A deterministic clock for tests. It satisfies `@ballast/core`'s `Clock` port structurally (no import, so core's
 * own tests can use it without a dependency cycle — SPEC §11.17).
 *
 * `advance(ms)` fires due timers in time order (ties in scheduling order) and lets every awaited continuation run
 * between them, so code of the shape `await sleep(); await next()` behaves as it would on a real clock. As with
 * Node's timers, a callback runs in the async context it was scheduled from (its AsyncLocalStorage stores).
 */

import { AsyncResource } from 'node:async_hooks';

/** The opaque handle returned by {@link FakeClock.setTimeout}. */
export interface FakeTimer {
  readonly at: number;
  readonly seq: number;
}

interface TimerEntry extends FakeTimer {
  readonly cb: () => void;
  /** The async context the timer was scheduled in: like a Node timer, it fires there (AsyncLocalStorage stores). */
  readonly scope: AsyncResource;
  cancelled: boolean;
}

// Captured at load, so Jest's fake timers (if a test enables them) cannot interfere with flushing.
const realSetImmediate: (cb: () => void) => unknown = setImmediate;

/** Resolves after every queued promise job (and the jobs they queue) has run. */
export function flushMicrotasks(): Promise<void> {
  return new Promise<void>((resolve) => {
    realSetImmediate(resolve);
  });
}

const MAX_RUN_ALL_TIMERS = 100_000;

/** Runs a timer's callback in its scope; returns the first failure so far (this one's if it is the first). */
function fire(
  timer: TimerEntry,
  failure: { readonly error: unknown } | undefined,
): { readonly error: unknown } | undefined {
  try {
    timer.scope.runInAsyncScope(timer.cb);
  } catch (error) {
    return failure ?? { error };
  }
  return failure;
}

export class FakeClock {
  #now: number;
  #seq = 0;
  /** Sorted by (at, seq); cancelled entries are removed eagerly. */
  #timers: TimerEntry[] = [];

  constructor(start = 0) {
    if (!Number.isFinite(start))
      throw new RangeError(`FakeClock: start must be a finite number, got ${start}`);
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(cb: () => void, ms: number): FakeTimer {
    // Negative and NaN delays are due now; +Infinity is never due (as on systemClock, whose long-delay chain never
    // reaches it), not due now.
    const delay = ms > 0 ? ms : 0;
    const entry: TimerEntry = {
      at: this.#now + delay,
      seq: this.#seq++,
      cb,
      scope: new AsyncResource('FakeTimer'),
      cancelled: false,
    };
    // binary search for the insertion point (stable for equal `at`)
    let lo = 0;
    let hi = this.#timers.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#timers[mid]!.at <= entry.at) lo = mid + 1;
      else hi = mid;
    }
    this.#timers.splice(lo, 0, entry);
    return entry;
  }

  clearTimeout(handle: unknown): void {
    if (handle === null || typeof handle !== 'object') return;
    const i = this.#timers.indexOf(handle as TimerEntry);
    if (i >= 0) {
      this.#timers[i]!.cancelled = true;
      this.#timers.splice(i, 1);
    }
  }

  /** Number of timers scheduled and not yet fired or cleared. */
  pendingTimers(): number {
    return this.#timers.length;
  }

  /**
   * Moves time forward by `ms`, firing every timer due on the way in time order. Promise continuations run
   * before the first timer, between timers and after the last, so awaited code observes each step. A timer that
   * throws does not stop the clock (as with @sinonjs/fake-timers): the others still fire, time still reaches the
   * target, and then the advance rejects with the first error thrown.
   */
  async advance(ms: number): Promise<void> {
    if (!Number.isFinite(ms) || ms < 0)
      throw new RangeError(`FakeClock.advance: ms must be a finite number ≥ 0, got ${ms}`);
    const target = this.#now + ms;
    let failure: { readonly error: unknown } | undefined;
    await flushMicrotasks();
    for (;;) {
      const next = this.#timers[0];
      if (next === undefined || next.at > target) break;
      this.#timers.shift();
      this.#now = next.at;
      failure = fire(next, failure);
      await flushMicrotasks();
    }
    // Never backwards: an advance started inside a timer (or alongside another) may end after a longer one did.
    if (target > this.#now) this.#now = target;
    await flushMicrotasks();
    if (failure !== undefined) throw failure.error;
  }

  /**
   * Fires timers (including ones scheduled by timers) until none is left but those never due (an infinite delay),
   * which stay pending. A timer that throws does not stop the run; it rejects with the first error at the end.
   * Refusing a self-rescheduling timer leaves it pending (it is not dropped unfired).
   */
  async runAll(): Promise<void> {
    let failure: { readonly error: unknown } | undefined;
    await flushMicrotasks();
    for (let fired = 0; ; fired++) {
      const next = this.#timers[0];
      if (next === undefined || next.at === Infinity) break;
      if (fired >= MAX_RUN_ALL_TIMERS) {
        if (failure !== undefined) throw failure.error; // the first error thrown, as promised
        throw new Error(
          `FakeClock.runAll: more than ${MAX_RUN_ALL_TIMERS} timers fired; a timer keeps rescheduling itself`,
        );
      }
      this.#timers.shift();
      this.#now = Math.max(this.#now, next.at);
      failure = fire(next, failure);
      await flushMicrotasks();
    }
    if (failure !== undefined) throw failure.error;
  }

  /** Resolves after `ms` of this clock's time; rejects with `signal.reason` if the signal aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        this.clearTimeout(timer);
        reject(signal!.reason);
      };
      const timer = this.setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
