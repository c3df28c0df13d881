import { ErrorCode, type ExceptionKind, type ResilienceError } from '../errors/resilience-error';
import { stacklessError } from '../errors/stackless';

/** Codes of the admission refusals Ballast raises; calls ending in one count as `rejected` (SPEC §8). */
export const REJECTION_CODES: ReadonlySet<string> = new Set<string>([
  ErrorCode.RATE_LIMITED,
  ErrorCode.ADAPTIVE_THROTTLE,
  ErrorCode.BULKHEAD_FULL,
  ErrorCode.BULKHEAD_QUEUE_SHED,
  ErrorCode.BULKHEAD_QUEUE_TIMEOUT,
  ErrorCode.CIRCUIT_OPEN,
  ErrorCode.FORCED_OPEN,
  ErrorCode.STORE_UNAVAILABLE,
]);

const MESSAGES: Readonly<Record<string, string>> = {
  [ErrorCode.RATE_LIMITED]: 'Rate limit exceeded',
  [ErrorCode.ADAPTIVE_THROTTLE]: 'Shed by the adaptive throttle',
  [ErrorCode.BULKHEAD_FULL]: 'Bulkhead full',
  [ErrorCode.BULKHEAD_QUEUE_SHED]: 'Shed from the bulkhead queue',
  [ErrorCode.BULKHEAD_QUEUE_TIMEOUT]: 'Waited too long for a bulkhead slot',
  [ErrorCode.CIRCUIT_OPEN]: 'Circuit open',
  [ErrorCode.FORCED_OPEN]: 'Forced open by an operator',
  [ErrorCode.STORE_UNAVAILABLE]: 'Resilience state store unavailable',
  [ErrorCode.DEADLINE_EXCEEDED]: 'Deadline exceeded',
};

/**
 * Builds a rejection without a stack trace. Rejections are the hot path of an overloaded service and their stack
 * would only ever point into the executor; `new Error()` with a stack costs 2–5 µs here (peer-overhead.md §5).
 */
export function rejection(
  kind: ExceptionKind,
  code: string,
  policy: string,
  route: string | undefined,
  retryAfter?: number,
  cause?: unknown,
): ResilienceError {
  return stacklessError({
    kind,
    code,
    message: MESSAGES[code] ?? code,
    policy,
    ...(route === undefined ? {} : { route }),
    ...(retryAfter === undefined ? {} : { retryAfter }),
    ...(cause === undefined ? {} : { cause }),
  });
}
