import { ResilienceError, type ExceptionKind } from '../errors/resilience-error';
import type { CallState } from './call-state';

/** Where a classified result travels on its error, so the call can resolve with it (SPEC §14.3). */
const RESULT = Symbol('ballast.classifiedResult');

/**
 * The failure a classified result stands for while strategies judge it: an error of the verdict's kind (and
 * `retryAfter`), carrying the result itself. Built only for results with a verdict (a failing dependency).
 */
export function classifiedResult(
  inv: CallState,
  kind: ExceptionKind,
  retryAfter: number | undefined,
  result: unknown,
): ResilienceError {
  const error = new ResilienceError({
    kind,
    message: `A result classified as ${kind}`,
    policy: inv.policyName,
    ...(inv.route === undefined ? {} : { route: inv.route }),
    ...(retryAfter === undefined ? {} : { retryAfter }),
  });
  Object.defineProperty(error, RESULT, { value: result });
  return error;
}

/** True when `error` stands for a classified result (read it with {@link resultOf}). */
export function isClassifiedResult(error: unknown): error is ResilienceError {
  if (typeof error !== 'object' || error === null) return false;
  try {
    return Object.prototype.hasOwnProperty.call(error, RESULT);
  } catch {
    return false; // a revoked Proxy a call failed with: not ours, and its error must stay the call's
  }
}

export function resultOf(error: ResilienceError): unknown {
  return (error as unknown as Record<symbol, unknown>)[RESULT];
}
