import { EXCEPTION_KINDS, isResilienceError } from './resilience-error';
import type { ExceptionKind } from './resilience-error';
import type { Classifier } from '../resilience-types';

/**
 * The default error classifier (SPEC §5): maps anything a user function throws to an {@link ExceptionKind}, the
 * vocabulary retry, breaker and throttle decide with (through the outcome table in `outcome-class.ts`).
 *
 * Order of the checks, first match wins:
 * 1. A `ResilienceError` keeps its own kind (also one thrown by another copy of Ballast).
 * 2. A Node / undici network error code (`code` on the error or anywhere on its `cause` chain — `fetch` wraps the
 *    socket error as `TypeError('fetch failed', { cause })`) → `infrastructure`.
 * 3. A `TimeoutError` (what `AbortSignal.timeout()` aborts with) → `infrastructure`: the dependency did not answer
 *    in time, exactly like `ETIMEDOUT` or our own `attempt_timeout`, so it is retryable and counts against the
 *    breaker. An `AbortError` is *not* special-cased: when the abort was ours (caller, timeout, lost hedge), the
 *    executor already knows and classifies the outcome as cancelled without asking; an abort nobody here caused is
 *    an unexplained failure → `internal`.
 * 4. An HTTP status on `status`, `statusCode` or `response.status` (an integer in 400..599): 429 → `throttled`,
 *    408 and 5xx → `infrastructure`, 409 → `conflict`, 404 → `not_found`, any other 4xx → `domain` (as SPEC §5
 *    says: 401/403/422 are not mapped to authentication/authorization/validation by default; extend with
 *    `composeClassifier` if you want that).
 * 5. Anything else → `internal`.
 */

/** Error codes of a dependency that could not be reached or dropped the connection. */
export const NETWORK_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'ESOCKETTIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'ENOTFOUND',
  'ENETUNREACH',
  'ENETDOWN',
  'ENETRESET',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ERR_SOCKET_CONNECTION_TIMEOUT',
  'ERR_SOCKET_CLOSED',
  'ERR_HTTP2_STREAM_ERROR',
  'ERR_HTTP2_SESSION_ERROR',
  'ERR_HTTP2_GOAWAY_SESSION',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);

/** How deep the `cause` chain is searched for a network code (guards against cycles). */
const MAX_CAUSE_DEPTH = 5;

/**
 * Reads `value[key]`; a getter (or a Proxy trap) that throws reads as absent. Classification judges what a call
 * threw, so it must never throw itself: that would replace the caller's error with the getter's, and leave the
 * call's bulkhead slot and breaker lease unreleased (they are given back after the outcome is classified).
 */
function property(value: unknown, key: string): unknown {
  if (typeof value !== 'object' || value === null) return undefined;
  try {
    return (value as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}

/** {@link isResilienceError} for an arbitrary thrown value: a Proxy whose traps throw is not one. */
function isOwnError(error: unknown): error is { readonly kind: ExceptionKind; readonly retryAfter?: number } {
  try {
    return isResilienceError(error);
  } catch {
    return false;
  }
}

function hasNetworkCode(error: unknown): boolean {
  let current = error;
  for (let depth = 0; depth <= MAX_CAUSE_DEPTH && typeof current === 'object' && current !== null; depth++) {
    const code = property(current, 'code');
    if (typeof code === 'string' && NETWORK_ERROR_CODES.has(code)) return true;
    current = property(current, 'cause');
  }
  return false;
}

function isHttpErrorStatus(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 400 && value <= 599;
}

/** The HTTP status an error carries on `status`, `statusCode` or `response.status` (400..599), if any. */
export function httpStatusOf(error: unknown): number | undefined {
  const direct = property(error, 'status');
  if (isHttpErrorStatus(direct)) return direct;
  const statusCode = property(error, 'statusCode');
  if (isHttpErrorStatus(statusCode)) return statusCode;
  const nested = property(property(error, 'response'), 'status');
  return isHttpErrorStatus(nested) ? nested : undefined;
}

/** Maps an HTTP error status to a kind (SPEC §5). */
export function kindOfHttpStatus(status: number): ExceptionKind {
  if (status === 429) return 'throttled';
  if (status === 408 || status >= 500) return 'infrastructure';
  if (status === 409) return 'conflict';
  if (status === 404) return 'not_found';
  return 'domain';
}

/** The default classifier; see the file comment for the rules. */
export function classify(error: unknown): ExceptionKind {
  if (isOwnError(error)) return error.kind;
  if (typeof error !== 'object' || error === null) return 'internal';
  if (hasNetworkCode(error)) return 'infrastructure';
  if (property(error, 'name') === 'TimeoutError') return 'infrastructure';
  const status = httpStatusOf(error);
  return status === undefined ? 'internal' : kindOfHttpStatus(status);
}

/**
 * Extends the default classifier with a user's (`Resilience`'s `classify` option). A `ResilienceError` always
 * keeps its own kind — Ballast's rejections (`circuit_open`, …) must mean the same thing everywhere. For any
 * other error the user's answer wins; `undefined`, a value that is not an {@link ExceptionKind}, or a throwing
 * classifier fall back to the default, so a buggy classifier can never replace the user's real error.
 */
export function composeClassifier(user?: Classifier): (error: unknown) => ExceptionKind {
  if (user === undefined) return classify;
  return (error) => {
    if (isOwnError(error)) return error.kind;
    let kind: ExceptionKind | undefined;
    try {
      kind = user(error);
    } catch {
      kind = undefined;
    }
    return kind !== undefined && EXCEPTION_KINDS.includes(kind) ? kind : classify(error);
  };
}

// --- Retry-After ---------------------------------------------------------------------------------------------------

const DELTA_SECONDS = /^\s*(\d+(?:\.\d+)?)\s*$/;

function headerValue(headers: unknown): unknown {
  if (typeof headers !== 'object' || headers === null) return undefined;
  const get = property(headers, 'get');
  // A throwing `get` or an exotic headers object reads as no header (see `property`).
  try {
    if (typeof get === 'function') {
      // Fetch `Headers`, or a Map-like keyed by the lower-case name.
      const value: unknown = (get as (name: string) => unknown).call(headers, 'retry-after');
      if (value !== undefined && value !== null) return value;
    }
    const record = headers as Record<string, unknown>;
    if (record['retry-after'] !== undefined) return record['retry-after'];
    if (record['Retry-After'] !== undefined) return record['Retry-After'];
    for (const key of Object.keys(record)) if (key.toLowerCase() === 'retry-after') return record[key];
  } catch {
    // fall through
  }
  return undefined;
}

/**
 * Parses a `Retry-After` value (RFC 9110 §10.2.3): delta-seconds, or an HTTP-date. An HTTP-date is the one place
 * Ballast reads the wall clock (`Date.now()`): the header names an absolute wall-clock instant, so no monotonic
 * clock can convert it. Past dates give 0. Anything unparseable gives `undefined`.
 */
export function parseRetryAfter(value: unknown): number | undefined {
  if (Array.isArray(value)) return parseRetryAfter(value[0]);
  if (typeof value === 'number') {
    const ms = value * 1000;
    return Number.isFinite(ms) && ms >= 0 ? ms : undefined;
  }
  if (typeof value !== 'string') return undefined;
  const seconds = DELTA_SECONDS.exec(value);
  if (seconds !== null) {
    const ms = Number(seconds[1]) * 1000;
    return Number.isFinite(ms) ? ms : undefined;
  }
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/**
 * How long (ms) the error asks the caller to wait: a `ResilienceError`'s `retryAfter`, else a `Retry-After` header
 * on `headers` or `response.headers` (plain object, any case, or a fetch `Headers`). `undefined` when absent.
 */
export function retryAfterOf(error: unknown): number | undefined {
  if (isOwnError(error)) return error.retryAfter;
  if (typeof error !== 'object' || error === null) return undefined;
  return (
    parseRetryAfter(headerValue(property(error, 'headers'))) ??
    parseRetryAfter(headerValue(property(property(error, 'response'), 'headers')))
  );
}
