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

/** `performance.now()` and Node timers, `unref`'d so Ballast never keeps a process alive. */
export const systemClock: Clock = Object.freeze({
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
