/**
 * One error type for everything Ballast raises or classifies. `kind` says what went wrong in terms a caller can
 * act on (retry? map to which HTTP status?); `code` is stable and specific (SPEC §5).
 */
export type ExceptionKind =
  | 'internal'
  | 'not_found'
  | 'conflict'
  | 'concurrency'
  | 'validation'
  | 'domain'
  | 'precondition'
  | 'authentication'
  | 'authorization'
  | 'configuration'
  | 'infrastructure'
  | 'throttled'
  | 'timeout';

export const EXCEPTION_KINDS: readonly ExceptionKind[] = Object.freeze([
  'internal',
  'not_found',
  'conflict',
  'concurrency',
  'validation',
  'domain',
  'precondition',
  'authentication',
  'authorization',
  'configuration',
  'infrastructure',
  'throttled',
  'timeout',
]);

/** Kinds worth trying again (SPEC §5). */
export const RETRYABLE_KINDS: readonly ExceptionKind[] = Object.freeze([
  'concurrency',
  'infrastructure',
  'throttled',
]);

/** Stable codes of the rejections and failures Ballast raises itself. */
export const ErrorCode = Object.freeze({
  RATE_LIMITED: 'rate_limited',
  ADAPTIVE_THROTTLE: 'adaptive_throttle',
  BULKHEAD_FULL: 'bulkhead_full',
  BULKHEAD_QUEUE_SHED: 'bulkhead_queue_shed',
  BULKHEAD_QUEUE_TIMEOUT: 'bulkhead_queue_timeout',
  CIRCUIT_OPEN: 'circuit_open',
  FORCED_OPEN: 'resilience_forced_open',
  ATTEMPT_TIMEOUT: 'attempt_timeout',
  DEADLINE_EXCEEDED: 'deadline_exceeded',
  STORE_UNAVAILABLE: 'resilience_store_unavailable',
  UNKNOWN_POLICY: 'unknown_policy',
  INVALID_POLICY: 'invalid_policy',
  VERSION_CONFLICT: 'version_conflict',
  /** A user callback the policy runs (a retry `delay`, a `classifyResult`) threw or answered nonsense. */
  CALLBACK_FAILED: 'callback_failed',
} as const);
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export interface ResilienceErrorInit {
  kind: ExceptionKind;
  /** Defaults to the kind. */
  code?: string;
  message?: string;
  /** Milliseconds the caller should wait before trying again. */
  retryAfter?: number;
  details?: Readonly<Record<string, unknown>>;
  cause?: unknown;
  policy?: string;
  route?: string;
}

const BRAND = Symbol.for('ballast.ResilienceError');

export class ResilienceError extends Error {
  readonly kind: ExceptionKind;
  readonly code: string;
  readonly retryable: boolean;
  readonly policy: string | undefined;
  readonly route: string | undefined;
  readonly retryAfter: number | undefined;
  readonly details: Readonly<Record<string, unknown>> | undefined;
  declare readonly cause: unknown;

  constructor(init: ResilienceErrorInit) {
    super(
      init.message ?? init.code ?? init.kind,
      init.cause === undefined ? undefined : { cause: init.cause },
    );
    this.name = 'ResilienceError';
    this.kind = init.kind;
    this.code = init.code ?? init.kind;
    this.retryable = RETRYABLE_KINDS.includes(init.kind);
    this.policy = init.policy;
    this.route = init.route;
    this.retryAfter = init.retryAfter;
    this.details = init.details;
  }

  /** A JSON form without the stack (safe to log; not meant for HTTP bodies, which must not carry policy names). */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      kind: this.kind,
      code: this.code,
      message: this.message,
      retryable: this.retryable,
      policy: this.policy,
      route: this.route,
      retryAfter: this.retryAfter,
      details: this.details,
    };
  }
}
Object.defineProperty(ResilienceError.prototype, BRAND, { value: true });

/** True for any `ResilienceError`, even one created by another copy of this package. */
export function isResilienceError(error: unknown): error is ResilienceError {
  return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[BRAND] === true;
}

/**
 * `error instanceof ResilienceError`, for whatever a call threw: a Proxy whose `getPrototypeOf` trap throws (a revoked
 * one) is not one, instead of replacing the caller's error with the trap's (see classify.ts). Failure paths only.
 */
export function isOwnResilienceError(error: unknown): error is ResilienceError {
  try {
    return error instanceof ResilienceError;
  } catch {
    return false;
  }
}
