import { performance } from 'node:perf_hooks';

/** Opaque handle of a timer scheduled through a {@link Clock}. */
export type TimerHandle = unknown;

/**
 * The only source of time in Ballast (SPEC §2): monotonic milliseconds and timers. Injected into `Resilience`,
 * never read ambiently, so tests run on a FakeClock and simulations in virtual time.
 */
export interface Clock {
  now(): number;
  setTimeout(callback: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** Node's timers hold a signed 32-bit delay: a longer one fires after 1 ms, with a `TimeoutOverflowWarning`. */
export const MAX_TIMER_DELAY = 2_147_483_647;

/**
 * The host timers a clock is built on (Node's, for {@link systemClock}; a fake in tests of the long-delay path).
 * Its functions are called unbound.
 */
export interface TimerHost {
  now(): number;
  setTimeout(callback: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/**
 * A delay longer than the host can hold, as a chain of host timers: each fires at most `maxDelay` ms later and
 * re-arms for what is left, measured on `host.now()`, until the due time.
 */
class LongTimer {
  #handle: TimerHandle;
  readonly #due: number;

  constructor(
    private readonly host: TimerHost,
    private readonly callback: () => void,
    ms: number,
    private readonly maxDelay: number,
  ) {
    this.#due = host.now() + ms;
    this.#handle = host.setTimeout(() => this.#fire(), maxDelay);
  }

  #fire(): void {
    const left = this.#due - this.host.now();
    if (left <= 0) return this.callback();
    this.#handle = this.host.setTimeout(() => this.#fire(), Math.min(left, this.maxDelay));
  }

  clear(): void {
    this.host.clearTimeout(this.#handle);
  }
}

/**
 * A {@link Clock} on `host`: delays up to `maxDelay` go straight to the host, longer ones (a `'600h'` deadline,
 * backoff or timeout: validation accepts any finite duration) become a {@link LongTimer}. @internal
 */
export function clockOn(host: TimerHost, maxDelay: number = MAX_TIMER_DELAY): Clock {
  return Object.freeze({
    // The host's own function, not a wrapper: clocks are read several times per call.
    now: host.now,
    setTimeout: (callback: () => void, ms: number): TimerHandle =>
      ms > maxDelay ? new LongTimer(host, callback, ms, maxDelay) : host.setTimeout(callback, ms),
    clearTimeout: (handle: TimerHandle): void => {
      if (handle instanceof LongTimer) handle.clear();
      else host.clearTimeout(handle);
    },
  });
}

/** `performance.now()` and Node timers, `unref`'d so Ballast never keeps a process alive. */
export const systemClock: Clock = clockOn({
  now: () => performance.now(),
  setTimeout: (callback: () => void, ms: number): TimerHandle => {
    const t = setTimeout(callback, ms);
    t.unref();
    return t;
  },
  clearTimeout: (handle: TimerHandle): void => {
    clearTimeout(handle as NodeJS.Timeout);
  },
});

/** Randomness port: a function returning a number in [0, 1). */
export type Random = () => number;
