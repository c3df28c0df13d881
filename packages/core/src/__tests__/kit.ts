import { getEventListeners } from 'node:events';
import { ResilienceError, type ExceptionKind } from '../errors/resilience-error';
import { ResiliencePolicy, type ResiliencePolicyOptions } from '../policy/resilience-policy';
import { CircuitBreakerStrategy } from '../strategies/circuit-breaker-strategy';
import type { Strategy } from '../strategies/strategy';
import type { CircuitBreakerOptions } from '../strategies/types';
import { PolicyRuntime } from '../executor/policy-runtime';
import type { Resilience } from '../resilience';

/**
 * Small shared tools for the executor suites (on top of `helpers.ts`): policy shorthands, typed errors, a
 * never-settling function, and an AbortSignal that counts its abort listeners.
 */

/** A policy from strategies in any order. */
export function policy(
  name: string,
  strategies: readonly Strategy[],
  extra: Omit<ResiliencePolicyOptions, 'name' | 'strategies'> = {},
): ResiliencePolicy {
  return new ResiliencePolicy({ name, strategies, ...extra });
}

/** A breaker with small, explicit numbers (10 s window, 5 s break, trips at 50 % after 4 calls). */
export function breaker(o: Partial<CircuitBreakerOptions> = {}): CircuitBreakerStrategy {
  return new CircuitBreakerStrategy({
    failureRatio: 0.5,
    samplingWindow: '10s',
    minThroughput: 4,
    breakDuration: '5s',
    ...o,
  });
}

/** An error of the given kind (a ResilienceError keeps its kind through `classify`). */
export function kindError(kind: ExceptionKind, message: string = kind, retryAfter?: number): ResilienceError {
  return new ResilienceError({ kind, message, ...(retryAfter === undefined ? {} : { retryAfter }) });
}

/** What a function that ignores its signal returns. */
export const hang = (): Promise<never> => new Promise<never>(() => {});

/** The `code` of an error (or undefined). */
export function codeOf(e: unknown): string | undefined {
  return e instanceof ResilienceError ? e.code : undefined;
}

/** The error a promise rejects with (fails the test when it resolves). */
export async function errorOf(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection, got a value');
}

/**
 * An AbortController whose signal counts the `abort` listeners attached to it, by wrapping add/removeEventListener
 * (and cross-checked with Node's own `getEventListeners`). `once` listeners that fired are gone.
 */
export interface TrackedController {
  readonly ac: AbortController;
  readonly signal: AbortSignal;
  /** Listeners still attached (wrapped count; an aborted signal has dropped its `once` listeners). */
  listeners(): number;
  /** Node's own count, independent of the wrapper. */
  nodeListeners(): number;
  adds(): number;
}

export function trackedController(): TrackedController {
  const ac = new AbortController();
  const signal = ac.signal;
  const live = new Set<unknown>();
  let adds = 0;
  const add = signal.addEventListener.bind(signal);
  const remove = signal.removeEventListener.bind(signal);
  signal.addEventListener = ((type: string, listener: unknown, opts?: unknown) => {
    if (type === 'abort') {
      adds++;
      live.add(listener);
    }
    (add as (t: string, l: unknown, o?: unknown) => void)(type, listener, opts);
  }) as typeof signal.addEventListener;
  signal.removeEventListener = ((type: string, listener: unknown, opts?: unknown) => {
    if (type === 'abort') live.delete(listener);
    (remove as (t: string, l: unknown, o?: unknown) => void)(type, listener, opts);
  }) as typeof signal.removeEventListener;
  return {
    ac,
    signal,
    listeners: (): number => (signal.aborted ? 0 : live.size),
    nodeListeners: (): number => getEventListeners(signal, 'abort').length,
    adds: (): number => adds,
  };
}

/**
 * Tracks Node timers created through the global `setTimeout` (which `systemClock` calls) until `restore()`: how many
 * are still live — neither cleared nor fired. `process.getActiveResourcesInfo()` cannot tell, since it omits
 * `unref`'d timers, and `systemClock` unrefs every timer.
 */
export interface NodeTimerTracker {
  live(): number;
  created(): number;
  restore(): void;
}

export function trackNodeTimers(): NodeTimerTracker {
  const live = new Set<NodeJS.Timeout>();
  let created = 0;
  const realSet = global.setTimeout;
  const realClear = global.clearTimeout;
  const set = jest.spyOn(global, 'setTimeout').mockImplementation(((cb: () => void, ms?: number) => {
    created++;
    const t = realSet(() => {
      live.delete(t);
      cb();
    }, ms);
    live.add(t);
    return t;
  }) as typeof setTimeout);
  const clear = jest.spyOn(global, 'clearTimeout').mockImplementation(((t?: NodeJS.Timeout) => {
    if (t !== undefined) live.delete(t);
    realClear(t);
  }) as typeof clearTimeout);
  return {
    live: () => live.size,
    created: () => created,
    restore: () => {
      set.mockRestore();
      clear.mockRestore();
    },
  };
}

/** The runtime calls of `policyName` run on now, captured from a stream admission's key lookup (no fn runs). */
export async function runtimeOf(resilience: Resilience, policyName: string): Promise<PolicyRuntime> {
  const spy = jest.spyOn(PolicyRuntime.prototype, 'key');
  try {
    await resilience.admitStream(policyName).then((permit) => permit.settle());
    return spy.mock.contexts.at(-1) as PolicyRuntime;
  } finally {
    spy.mockRestore();
  }
}
