import fc from 'fast-check';
import { EXCEPTION_KINDS, ResilienceError } from './resilience-error';
import type { ExceptionKind } from './resilience-error';
import {
  NETWORK_ERROR_CODES,
  classify,
  composeClassifier,
  httpStatusOf,
  parseRetryAfter,
  retryAfterOf,
} from './classify';

const withCode = (code: string): Error => Object.assign(new Error(code), { code });

describe('classify', () => {
  it('keeps the kind of a ResilienceError', () => {
    for (const kind of EXCEPTION_KINDS) expect(classify(new ResilienceError({ kind }))).toBe(kind);
  });

  it.each([...NETWORK_ERROR_CODES])('maps network code %s to infrastructure', (code) => {
    expect(classify(withCode(code))).toBe('infrastructure');
  });

  it('finds a network code on the cause chain (undici fetch failed)', () => {
    const error = new TypeError('fetch failed', { cause: withCode('UND_ERR_CONNECT_TIMEOUT') });
    expect(classify(error)).toBe('infrastructure');
    expect(classify(new Error('x', { cause: new Error('y', { cause: withCode('ECONNRESET') }) }))).toBe(
      'infrastructure',
    );
  });

  it('does not loop on a cyclic cause chain', () => {
    const a: { cause?: unknown } = {};
    const b = { cause: a };
    a.cause = b;
    expect(classify(a)).toBe('internal');
  });

  it('maps TimeoutError to infrastructure and leaves AbortError internal', () => {
    expect(classify(new DOMException('t', 'TimeoutError'))).toBe('infrastructure');
    expect(classify(new DOMException('a', 'AbortError'))).toBe('internal');
  });

  it.each<[number, ExceptionKind]>([
    [429, 'throttled'],
    [408, 'infrastructure'],
    [500, 'infrastructure'],
    [503, 'infrastructure'],
    [599, 'infrastructure'],
    [409, 'conflict'],
    [404, 'not_found'],
    [400, 'domain'],
    [401, 'domain'],
    [403, 'domain'],
    [422, 'domain'],
  ])('maps HTTP %i to %s from status, statusCode and response.status', (status, kind) => {
    expect(classify({ status })).toBe(kind);
    expect(classify(Object.assign(new Error(), { statusCode: status }))).toBe(kind);
    expect(classify({ response: { status } })).toBe(kind);
  });

  it('ignores non-error statuses and non-integer values', () => {
    expect(classify({ status: 200 })).toBe('internal');
    expect(classify({ status: 302 })).toBe('internal');
    expect(classify({ status: '503' })).toBe('internal');
    expect(classify({ status: 503.5 })).toBe('internal');
    expect(httpStatusOf({ status: 200, statusCode: 503 })).toBe(503);
  });

  it('maps everything else to internal', () => {
    for (const e of [new Error('x'), 'str', 42, null, undefined, {}, withCode('ENOENT')])
      expect(classify(e)).toBe('internal');
  });

  it('always returns a known kind', () => {
    fc.assert(
      fc.property(fc.anything(), (value) => {
        expect(EXCEPTION_KINDS).toContain(classify(value));
      }),
    );
  });
});

describe('composeClassifier', () => {
  it('returns the default when no user classifier is given', () => {
    expect(composeClassifier()).toBe(classify);
  });

  it('lets the user classify foreign errors and defers on undefined', () => {
    const c = composeClassifier((e) => (e instanceof RangeError ? 'validation' : undefined));
    expect(c(new RangeError('x'))).toBe('validation');
    expect(c({ status: 429 })).toBe('throttled');
  });

  it('never reclassifies a ResilienceError', () => {
    const c = composeClassifier(() => 'domain');
    expect(c(new ResilienceError({ kind: 'infrastructure', code: 'circuit_open' }))).toBe('infrastructure');
  });

  it('falls back to the default when the user classifier throws or answers nonsense', () => {
    const throwing = composeClassifier(() => {
      throw new Error('bug');
    });
    expect(throwing({ status: 503 })).toBe('infrastructure');
    const nonsense = composeClassifier(() => 'nonsense' as ExceptionKind);
    expect(nonsense({ status: 404 })).toBe('not_found');
  });
});

describe('retryAfterOf', () => {
  it('reads a ResilienceError retryAfter', () => {
    expect(retryAfterOf(new ResilienceError({ kind: 'throttled', retryAfter: 250 }))).toBe(250);
    expect(retryAfterOf(new ResilienceError({ kind: 'throttled' }))).toBeUndefined();
  });

  it('reads delta-seconds from headers in any case and shape', () => {
    expect(retryAfterOf({ headers: { 'retry-after': '3' } })).toBe(3000);
    expect(retryAfterOf({ headers: { 'Retry-After': 2 } })).toBe(2000);
    expect(retryAfterOf({ headers: { 'RETRY-AFTER': ['1.5'] } })).toBe(1500);
    expect(retryAfterOf({ response: { headers: new Headers({ 'Retry-After': '4' }) } })).toBe(4000);
    expect(retryAfterOf({ response: { headers: new Map([['retry-after', '5']]) } })).toBe(5000);
  });

  it('converts an HTTP-date with the wall clock', () => {
    const spy = jest.spyOn(Date, 'now').mockReturnValue(Date.parse('Wed, 21 Oct 2015 07:28:00 GMT'));
    try {
      expect(retryAfterOf({ headers: { 'retry-after': 'Wed, 21 Oct 2015 07:28:30 GMT' } })).toBe(30_000);
      expect(parseRetryAfter('Wed, 21 Oct 2015 07:27:00 GMT')).toBe(0);
    } finally {
      spy.mockRestore();
    }
  });

  it('is undefined when absent or unparseable', () => {
    expect(retryAfterOf(new Error('x'))).toBeUndefined();
    expect(retryAfterOf('x')).toBeUndefined();
    expect(retryAfterOf({ headers: {} })).toBeUndefined();
    expect(retryAfterOf({ headers: { 'retry-after': 'soon' } })).toBeUndefined();
    expect(parseRetryAfter(-1)).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
  });
});
