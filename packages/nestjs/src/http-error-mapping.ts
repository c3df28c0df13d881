import { ErrorCode, isResilienceError } from '@ballast/core';

/** The JSON body of a mapped rejection. Never carries policy names, routes, details or stacks. */
export interface ResilienceErrorBody {
  readonly statusCode: number;
  readonly error: string;
  readonly code: string;
  readonly message: string;
}

export interface MappedResilienceError {
  readonly status: 429 | 503 | 504;
  readonly body: ResilienceErrorBody;
  /** Whole seconds (≥ 1) for the `Retry-After` header; always set on 429, on 503 when the wait is known. */
  readonly retryAfterSeconds: number | undefined;
}

const TOO_MANY = 'Too Many Requests';
const UNAVAILABLE = 'Service Unavailable';
const GATEWAY_TIMEOUT = 'Gateway Timeout';

/**
 * Generic, client-safe messages. Core's own messages name the policy and route, which describe our topology to
 * whoever is calling, so they stay in logs and events only.
 */
const UNAVAILABLE_CODES: ReadonlyMap<string, string> = new Map([
  [ErrorCode.CIRCUIT_OPEN, 'A dependency is failing, so the request was not attempted; retry later.'],
  [ErrorCode.BULKHEAD_FULL, 'The service is at capacity; retry later.'],
  [ErrorCode.BULKHEAD_QUEUE_SHED, 'The request waited too long for capacity and was shed; retry later.'],
  [ErrorCode.BULKHEAD_QUEUE_TIMEOUT, 'The request waited too long for capacity; retry later.'],
  [ErrorCode.FORCED_OPEN, 'This operation is temporarily disabled by an operator.'],
  [
    ErrorCode.STORE_UNAVAILABLE,
    'Resilience state is unavailable, so the request was not attempted; retry later.',
  ],
]);
const TIMEOUT_CODES: ReadonlyMap<string, string> = new Map([
  [ErrorCode.ATTEMPT_TIMEOUT, 'A dependency did not answer in time.'],
  [ErrorCode.DEADLINE_EXCEEDED, 'The request deadline was exceeded.'],
]);
const THROTTLED_MESSAGES: ReadonlyMap<string, string> = new Map([
  [ErrorCode.RATE_LIMITED, 'Too many requests; retry after the indicated delay.'],
  [ErrorCode.ADAPTIVE_THROTTLE, 'The service is shedding load; retry later.'],
]);

/**
 * The longest `Retry-After` written: 2³¹ − 1 s (68 years), the largest delta-seconds RFC 9110 §10.2.3 expects every
 * recipient to handle. Longer waits (a huge rate-limit period) would print as `1e+305`, which is not whole seconds.
 */
export const MAX_RETRY_AFTER_SECONDS = 2_147_483_647;

/** ms → whole seconds, never below 1 (a `Retry-After: 0` invites an immediate retry storm), at most 2³¹ − 1. */
export function retryAfterSeconds(ms: number | undefined): number {
  if (ms === undefined || !Number.isFinite(ms) || ms <= 1000) return 1;
  const seconds = Math.ceil(ms / 1000);
  return seconds < MAX_RETRY_AFTER_SECONDS ? seconds : MAX_RETRY_AFTER_SECONDS;
}

/**
 * SPEC §9's table: `throttled` → 429 (+ Retry-After); circuit open, bulkhead full or shed, forced open, store
 * unavailable → 503; attempt timeout, deadline exceeded → 504. Anything else — including a `ResilienceError` a
 * user threw or a configuration error — is not Ballast's rejection of *this request*, so it is not mapped. What
 * tells them apart: the executor's rejections always name their policy (SPEC §11.2) and carry one of its codes.
 */
export function mapResilienceError(error: unknown): MappedResilienceError | undefined {
  if (!isResilienceError(error) || error.policy === undefined) return undefined;
  if (error.kind === 'throttled') {
    const message = THROTTLED_MESSAGES.get(error.code);
    if (message === undefined) return undefined;
    return {
      status: 429,
      body: { statusCode: 429, error: TOO_MANY, code: error.code, message },
      retryAfterSeconds: retryAfterSeconds(error.retryAfter),
    };
  }
  const unavailable = UNAVAILABLE_CODES.get(error.code);
  if (unavailable !== undefined) {
    return {
      status: 503,
      body: { statusCode: 503, error: UNAVAILABLE, code: error.code, message: unavailable },
      retryAfterSeconds: error.retryAfter === undefined ? undefined : retryAfterSeconds(error.retryAfter),
    };
  }
  const timeout = TIMEOUT_CODES.get(error.code);
  if (timeout !== undefined) {
    return {
      status: 504,
      body: { statusCode: 504, error: GATEWAY_TIMEOUT, code: error.code, message: timeout },
      retryAfterSeconds: undefined,
    };
  }
  return undefined;
}
