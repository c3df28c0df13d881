import { ResilienceError, type ResilienceErrorInit } from './resilience-error';

/**
 * Builds a `ResilienceError` without capturing a stack trace: `Error.stackTraceLimit` is 0 during construction
 * and restored in `finally`, the same technique as the executor's `rejection()` (executor/rejections.ts).
 *
 * For errors built on the hot path of an overloaded service (admission refusals and sheds): their stack would only
 * ever point into Ballast, and capturing one costs 10–30 µs on V8, more than the rest of the refusal. `stack` then
 * holds just the `name: message` line.
 */
export function stacklessError(init: ResilienceErrorInit): ResilienceError {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new ResilienceError(init);
  } finally {
    Error.stackTraceLimit = limit;
  }
}
