import type { Clock } from '@ballast/core';
import { EventHeap, type HeapEvent } from './event-heap';

/** The handle {@link VirtualClock.setTimeout} returns. */
export interface VirtualTimer extends HeapEvent {
  readonly callback: () => void;
}

/**
 * How the clock lets promise continuations run between two events.
 * - `'tick'` (default): one `process.nextTick` barrier. Node runs the next-tick queue only once V8 has drained the
 *   whole microtask queue, including jobs queued while draining, so every `await` chain an event started has
 *   settled or parked on another timer before time moves. ~0.5 µs per event.
 * - `'immediate'`: a `setImmediate` barrier (a full event-loop turn, ~3 µs per event). Also drains work that
 *   itself goes through `process.nextTick`; kept as the reference the tests compare `'tick'` against.
 */
export type DrainMode = 'tick' | 'immediate';

const tickBarrier = (): Promise<void> => new Promise<void>((resolve) => process.nextTick(resolve));
const immediateBarrier = (): Promise<void> =>
  new Promise<void>((resolve) => {
    setImmediate(resolve);
  });

/**
 * Virtual time for a discrete-event simulation: implements core's `Clock` port, keeps timers in a binary heap and
 * advances by popping the earliest one. After each event it waits for the microtask queue to drain, so code like
 * `await fn(); clock.now()` observes the instant the event happened, exactly as on a real clock — but a minute of
 * traffic runs in a second or two.
 */
export class VirtualClock implements Clock {
  #now: number;
  #seq = 0;
  #fired = 0;
  readonly #heap = new EventHeap<VirtualTimer>();
  readonly #barrier: () => Promise<void>;

  constructor(options: { start?: number; drain?: DrainMode } = {}) {
    const start = options.start ?? 0;
    if (!Number.isFinite(start)) throw new RangeError(`VirtualClock: start must be finite, got ${start}`);
    this.#now = start;
    this.#barrier = options.drain === 'immediate' ? immediateBarrier : tickBarrier;
  }

  now(): number {
    return this.#now;
  }

  /** Schedules `callback` after `ms` of virtual time (negative, NaN → 0, as Node does). */
  setTimeout(callback: () => void, ms: number): VirtualTimer {
    const delay = ms > 0 ? ms : 0;
    const timer: VirtualTimer = { at: this.#now + delay, seq: this.#seq++, index: -1, callback };
    this.#heap.push(timer);
    return timer;
  }

  clearTimeout(handle: unknown): void {
    if (handle !== null && typeof handle === 'object' && 'callback' in handle) {
      this.#heap.remove(handle as VirtualTimer);
    }
  }

  /** Timers scheduled and not yet fired or cleared. */
  get pending(): number {
    return this.#heap.size;
  }

  /** Events fired since construction (the simulator's unit of work). */
  get fired(): number {
    return this.#fired;
  }

  /** Waits until every promise continuation queued so far (and those they queue) has run. */
  drain(): Promise<void> {
    return this.#barrier();
  }

  /**
   * Fires, in `(time, scheduling order)`, every timer due at or before `until` — including those scheduled by the
   * timers themselves — draining continuations after each; then sets the time to `until`. A callback that throws
   * rejects the run (it would crash a real process).
   */
  async runUntil(until: number): Promise<void> {
    if (!(until >= this.#now))
      throw new RangeError(`VirtualClock.runUntil: ${until} is before now (${this.#now})`);
    const heap = this.#heap;
    await this.#barrier();
    for (;;) {
      const next = heap.peek();
      if (next === undefined || next.at > until) break;
      heap.pop();
      this.#now = next.at;
      this.#fired++;
      next.callback();
      await this.#barrier();
    }
    this.#now = until;
  }

  /** Sleeps `ms` of virtual time (for simulated clients and models). */
  sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      this.setTimeout(resolve, ms);
    });
  }
}
