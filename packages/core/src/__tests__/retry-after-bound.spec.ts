import { ResilienceError } from '../errors/resilience-error';
import { RetryStrategy, type RetryOptions } from '../strategies/retry-strategy';
import { infraError, settle, setup } from './helpers';
import { breaker, codeOf, kindError, policy } from './kit';

/**
 * A `retryAfter` hint (a `throttled` error's, a `Retry-After` header, a nested call's open circuit) longer than the
 * backoff's `max` (SPEC §4 retry). `max` is the longest this policy sleeps between attempts; retrying before the
 * hint would only meet the same refusal, so a hint beyond `max` ends the retries at once with the real error (its
 * `retryAfter` intact for the caller), as a deadline does — no call sleeps for a year on a far-future Retry-After.
 */

const YEAR = 365 * 24 * 3600 * 1000;

const retrying = (o: Partial<RetryOptions> = {}) =>
  setup([
    policy('p', [
      new RetryStrategy({
        maxAttempts: 3,
        retryOn: ['throttled', 'infrastructure'],
        backoff: { base: 10, max: '1s', multiplier: 1, jitter: 'none' },
        ...o,
      }),
    ]),
  ]);

/** fn that fails with `errors[i]` on attempt i+1, then returns 'ok'. */
function failing(errors: unknown[]) {
  let calls = 0;
  const fn = (): Promise<string> => {
    const e = errors[calls++];
    return e === undefined ? Promise.resolve('ok') : Promise.reject(e);
  };
  return { fn, calls: () => calls };
}

describe('retryAfter beyond the backoff max', () => {
  it.each([
    ['a retryAfter of a year', kindError('throttled', 'come back next year', YEAR)],
    ['a retryAfter of days', kindError('throttled', 'come back in 3 days', 3 * 24 * 3600 * 1000)],
    [
      'an HTTP-date Retry-After a year ahead',
      Object.assign(new Error('429'), {
        status: 429,
        headers: { 'retry-after': new Date(Date.now() + YEAR).toUTCString() },
      }),
    ],
  ])('%s ends the retries at once with the real error; nothing sleeps', async (_, error) => {
    const { resilience, clock, ofType } = retrying();
    const f = failing([error]);
    const s = settle(resilience.run(f.fn, { policy: 'p' }));
    await clock.advance(0);
    expect(s).toEqual({ done: true, error });
    expect(f.calls()).toBe(1);
    expect(ofType('retry')).toEqual([]);
    expect(ofType('call')).toEqual([expect.objectContaining({ outcome: 'failure' })]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('a hint up to max is honoured (the wait is the hint, not the shorter backoff)', async () => {
    const { resilience, clock, ofType } = retrying();
    const f = failing([kindError('throttled', 'x', 1000), kindError('throttled', 'y', 999)]);
    const s = settle(resilience.run(f.fn, { policy: 'p' }));
    await clock.advance(1998);
    expect(s.done).toBe(false);
    await clock.advance(1);
    expect(s.value).toBe('ok');
    expect(ofType('retry').map((e) => e.delay)).toEqual([1000, 999]);
  });

  it('a later attempt whose hint is beyond max ends the retries there, with that attempt’s error', async () => {
    const { resilience, clock, ofType } = retrying();
    const last = kindError('throttled', 'later', 1001);
    const f = failing([infraError('first'), last]);
    const s = settle(resilience.run(f.fn, { policy: 'p' }));
    await clock.advance(10);
    expect(s.error).toBe(last);
    expect((s.error as ResilienceError).retryAfter).toBe(1001); // intact for the caller
    expect(f.calls()).toBe(2);
    expect(ofType('retry').map((e) => e.delay)).toEqual([10]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('spends no retry-budget token on a retry it rules out', async () => {
    const { resilience, clock } = retrying({ budget: { ratio: 0.5 } }); // one token, starts full
    const far = failing([kindError('throttled', 'far', 5000)]);
    const first = settle(resilience.run(far.fn, { policy: 'p' }));
    await clock.advance(0);
    expect(codeOf(first.error)).toBe('throttled');
    const near = failing([infraError()]);
    const s = settle(resilience.run(near.fn, { policy: 'p' }));
    await clock.advance(10);
    expect(s.value).toBe('ok'); // the token was still there
    expect(near.calls()).toBe(2);
  });

  it('an outer retry around a nested open circuit whose break outlasts max fails at once with circuit_open', async () => {
    const { resilience, clock, ofType } = setup([
      policy('inner', [breaker({ minThroughput: 1, breakDuration: '5s' })]),
      policy('outer', [
        new RetryStrategy({ maxAttempts: 3, backoff: { base: 10, max: '1s', jitter: 'none' } }),
      ]),
    ]);
    await resilience.run(() => Promise.reject(infraError()), { policy: 'inner' }).catch(() => 0);
    let innerCalls = 0;
    const s = settle(
      resilience.run(() => resilience.run(() => (innerCalls++, 'x'), { policy: 'inner' }), {
        policy: 'outer',
      }),
    );
    await clock.advance(0);
    expect(codeOf(s.error)).toBe('circuit_open');
    expect((s.error as ResilienceError).retryAfter).toBe(5000);
    expect(innerCalls).toBe(0);
    expect(ofType('retry')).toEqual([]);
    expect(ofType('rejected').map((e) => e.code)).toEqual(['circuit_open']); // one refusal, not one per retry
  });
});
