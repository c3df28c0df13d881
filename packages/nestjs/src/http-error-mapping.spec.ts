import 'reflect-metadata';
import { ErrorCode, ResilienceError } from '@ballast/core';
import { MAX_RETRY_AFTER_SECONDS, mapResilienceError, retryAfterSeconds } from './http-error-mapping';

const rejection = (kind: ResilienceError['kind'], code: string, retryAfter?: number) =>
  new ResilienceError({
    kind,
    code,
    policy: 'secret-policy',
    route: 'secret-route',
    message: `${code} in secret-policy/secret-route`,
    details: { internal: true },
    ...(retryAfter === undefined ? {} : { retryAfter }),
  });

describe('mapResilienceError (SPEC §9 table)', () => {
  it.each([
    ['throttled', ErrorCode.RATE_LIMITED, 429, 'Too Many Requests'],
    ['throttled', ErrorCode.ADAPTIVE_THROTTLE, 429, 'Too Many Requests'],
    ['infrastructure', ErrorCode.CIRCUIT_OPEN, 503, 'Service Unavailable'],
    ['infrastructure', ErrorCode.BULKHEAD_FULL, 503, 'Service Unavailable'],
    ['infrastructure', ErrorCode.BULKHEAD_QUEUE_SHED, 503, 'Service Unavailable'],
    ['infrastructure', ErrorCode.BULKHEAD_QUEUE_TIMEOUT, 503, 'Service Unavailable'],
    ['infrastructure', ErrorCode.FORCED_OPEN, 503, 'Service Unavailable'],
    ['infrastructure', ErrorCode.STORE_UNAVAILABLE, 503, 'Service Unavailable'],
    ['timeout', ErrorCode.ATTEMPT_TIMEOUT, 504, 'Gateway Timeout'],
    ['timeout', ErrorCode.DEADLINE_EXCEEDED, 504, 'Gateway Timeout'],
  ] as const)('%s / %s → %i', (kind, code, status, error) => {
    const mapped = mapResilienceError(rejection(kind, code));
    expect(mapped?.status).toBe(status);
    expect(mapped?.body).toEqual({ statusCode: status, error, code, message: expect.any(String) });
    expect(JSON.stringify(mapped?.body)).not.toMatch(/secret|internal/);
  });

  it('always sets Retry-After on 429, and on 503 only when the wait is known', () => {
    expect(mapResilienceError(rejection('throttled', ErrorCode.ADAPTIVE_THROTTLE))?.retryAfterSeconds).toBe(
      1,
    );
    expect(mapResilienceError(rejection('throttled', ErrorCode.RATE_LIMITED, 2500))?.retryAfterSeconds).toBe(
      3,
    );
    expect(
      mapResilienceError(rejection('infrastructure', ErrorCode.CIRCUIT_OPEN, 4000))?.retryAfterSeconds,
    ).toBe(4);
    expect(
      mapResilienceError(rejection('infrastructure', ErrorCode.BULKHEAD_FULL))?.retryAfterSeconds,
    ).toBeUndefined();
    expect(
      mapResilienceError(rejection('timeout', ErrorCode.ATTEMPT_TIMEOUT))?.retryAfterSeconds,
    ).toBeUndefined();
  });

  it('leaves everything else unmapped: configuration errors, user-raised kinds, foreign errors', () => {
    expect(mapResilienceError(rejection('configuration', ErrorCode.UNKNOWN_POLICY))).toBeUndefined();
    expect(mapResilienceError(new ResilienceError({ kind: 'not_found' }))).toBeUndefined();
    expect(mapResilienceError(new ResilienceError({ kind: 'infrastructure' }))).toBeUndefined();
    expect(
      mapResilienceError(Object.assign(new Error('x'), { code: 'circuit_open', status: 503 })),
    ).toBeUndefined();
  });

  it('leaves a ResilienceError that user code threw unmapped, even with a rejection kind or code', () => {
    // the executor's rejections name their policy; these were built by a handler, not raised by Ballast
    expect(
      mapResilienceError(new ResilienceError({ kind: 'throttled', message: 'our own quota' })),
    ).toBeUndefined();
    expect(
      mapResilienceError(new ResilienceError({ kind: 'infrastructure', code: ErrorCode.CIRCUIT_OPEN })),
    ).toBeUndefined();
    expect(mapResilienceError(rejection('throttled', 'quota_exceeded'))).toBeUndefined();
  });
});

describe('retryAfterSeconds', () => {
  it('rounds up to whole seconds and never goes below 1', () => {
    expect([undefined, 0, 1, 999, 1000, 1001, 59_000.5, Number.NaN].map(retryAfterSeconds)).toEqual([
      1, 1, 1, 1, 1, 2, 60, 1,
    ]);
  });

  it('caps a wait too long to write as whole seconds (a 1e308 ms rate-limit period printed "1e+305")', () => {
    expect([1e308, Number.MAX_VALUE, 2 ** 31 * 1000 + 5000].map(retryAfterSeconds)).toEqual([
      MAX_RETRY_AFTER_SECONDS,
      MAX_RETRY_AFTER_SECONDS,
      MAX_RETRY_AFTER_SECONDS,
    ]);
    expect(String(MAX_RETRY_AFTER_SECONDS)).toMatch(/^\d+$/);
    expect(retryAfterSeconds(86_400_000)).toBe(86_400);
  });
});
