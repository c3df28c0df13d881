import { parseRetryAfter } from './classify';
import type { ExceptionKind } from './resilience-error';

/**
 * Results that are failures (SPEC §14.3). A `fetch` 503 is a *result*: nothing throws, yet the dependency failed.
 * A policy's `classifyResult` gives such a result a verdict, and every strategy then treats it as a failure of that
 * kind — the breaker counts it, retry retries it, the fallback may replace it — while `run` still resolves with the
 * last result when the call ends on one (the caller reads its response).
 */
export interface ResultVerdict {
  readonly kind: ExceptionKind;
  /** ms the dependency asked us to wait (a 429's Retry-After); honoured by retry like a throttled error's. */
  readonly retryAfter?: number;
}

/** `undefined` for a healthy result. */
export type ResultClassifier = (result: unknown) => ResultVerdict | undefined;

function statusOf(result: unknown): unknown {
  if (typeof result !== 'object' || result === null) return undefined;
  try {
    return (result as { status?: unknown }).status;
  } catch {
    return undefined;
  }
}

function retryAfterHeader(result: unknown): unknown {
  try {
    const headers = (result as { headers?: { get?: unknown } }).headers;
    return typeof headers?.get === 'function'
      ? (headers.get as (n: string) => unknown).call(headers, 'retry-after')
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Classifies a fetch `Response` (anything with a numeric `status` and fetch-like `headers`): 429 → `throttled`, with
 * `retryAfter` from its `Retry-After` (delta-seconds or an HTTP-date, in ms); 408 and 5xx → `infrastructure`;
 * anything else (and anything that is not a response) → healthy. The built-in classifier named `'http'`.
 */
export function classifyHttpResponse(response: unknown): ResultVerdict | undefined {
  const status = statusOf(response);
  if (typeof status !== 'number') return undefined;
  if (status === 429) {
    const retryAfter = parseRetryAfter(retryAfterHeader(response));
    return retryAfter === undefined ? { kind: 'throttled' } : { kind: 'throttled', retryAfter };
  }
  if (status === 408 || (status >= 500 && status <= 599)) return { kind: 'infrastructure' };
  return undefined;
}

const REGISTRY = new Map<string, ResultClassifier>([['http', classifyHttpResponse]]);

/**
 * Names a result classifier, so a policy from a JSON spec (which cannot carry a function) can use it:
 * `{ "classifyResult": "grpc-status" }`. Register before the spec is loaded; the built-in `'http'` cannot be
 * replaced (a spec must mean the same thing in every process).
 */
export function registerResultClassifier(name: string, classifier: ResultClassifier): void {
  if (typeof name !== 'string' || name.trim() === '')
    throw new TypeError('A result classifier needs a non-blank name');
  if (typeof classifier !== 'function') throw new TypeError(`Result classifier '${name}' must be a function`);
  if (name === 'http') throw new TypeError("The built-in result classifier 'http' cannot be replaced");
  REGISTRY.set(name, classifier);
}

/** The classifier registered under `name`, if any. @internal */
export function namedResultClassifier(name: string): ResultClassifier | undefined {
  return REGISTRY.get(name);
}

/** The names registered now (for a violation's message). @internal */
export function resultClassifierNames(): string[] {
  return [...REGISTRY.keys()];
}
