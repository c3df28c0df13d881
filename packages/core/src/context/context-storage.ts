import { AsyncLocalStorage } from 'node:async_hooks';
import { ResilienceError } from '../errors/resilience-error';
import type { Clock } from '../time/clock';
import { formatValue } from '../validation/options-validator';

/**
 * The ambient invocation context (SPEC §5): one plain, immutable frame per scope, carried by AsyncLocalStorage
 * through everything a function awaits. `withDeadline` and `bindCriticality` each create one frame; the executor
 * runs every call under its own frame whose `call` exposes that call's (lazily created) signal. A frame copies
 * whatever it does not change from its parent, so a lookup is a single `getStore()` — no walking of a chain.
 * @internal
 */
export interface ContextFrame {
  /** Absolute deadline in ms on `deadlineClock`, or undefined when no deadline is bound. */
  readonly deadline: number | undefined;
  /** The clock that measured `deadline`; remaining time is always read from this same clock (SPEC §11.3). */
  readonly deadlineClock: Clock | undefined;
  /** 0 (BEST_EFFORT) … 3 (CRITICAL); undefined means NORMAL. */
  readonly criticality: number | undefined;
  /** The innermost call running under `resilience.run`, for `currentSignal()`. */
  readonly call: { readonly signal: AbortSignal } | undefined;
}

/** @internal */
export const contextStorage = new AsyncLocalStorage<ContextFrame>();

/** The innermost frame, or undefined outside any Ballast scope. @internal */
export function currentFrame(): ContextFrame | undefined {
  return contextStorage.getStore();
}

/** The signal of the innermost call running under `resilience.run`, or `undefined` outside one (SPEC §5). */
export function currentSignal(): AbortSignal | undefined {
  return contextStorage.getStore()?.call?.signal;
}

/** `withDeadline(budget, fn)` / `bindCriticality(level, fn)` given something other than a function. @internal */
export function notAFunction(method: string, fn: unknown): ResilienceError {
  return new ResilienceError({
    kind: 'configuration',
    message: `Invalid ${method}() call: fn must be a function, got ${formatValue(fn)}`,
  });
}
