import fc from 'fast-check';
import { policyFromSpec, policyToSpec } from '../policy/policy-spec';
import { RetryStrategy, type RetryOptions } from '../strategies/retry-strategy';
import type { CallContext } from '../resilience-types';
import { infraError, settle, setup } from './helpers';
import { kindError, policy } from './kit';

/** RetryStrategy's `delay` function (SPEC §14.3): a number wins over the backoff; bad answers fail the call. */

const retrying = (o: RetryOptions) => setup([policy('p', [new RetryStrategy(o)])]);

/** fn failing `failures` times with `error`, then answering 'ok'; records when each attempt started. */
function failing(clock: { now(): number }, failures: number, error: unknown = infraError()) {
  const at: number[] = [];
  const fn = (ctx: CallContext): Promise<string> => {
    at.push(clock.now());
    return ctx.attempt <= failures ? Promise.reject(error) : Promise.resolve('ok');
  };
  return { at, fn };
}

describe('retry delay function', () => {
  it('a number wins over the backoff; it is told the failed attempt and its error', async () => {
    const seen: unknown[] = [];
    const error = infraError();
    const { resilience, clock, ofType } = retrying({
      maxAttempts: 4,
      backoff: { base: 1000, max: 1000, jitter: 'none' },
      delay: (attempt, e) => {
        seen.push([attempt, e]);
        return attempt * 10;
      },
    });
    const { at, fn } = failing(clock, 3, error);
    const s = settle(resilience.run(fn, { policy: 'p' }));
    await clock.advance(1000);
    expect(s.value).toBe('ok');
    expect(at).toEqual([0, 10, 30, 60]);
    expect(seen).toEqual([
      [1, error],
      [2, error],
      [3, error],
    ]);
    expect(ofType('retry').map((e) => e.delay)).toEqual([10, 20, 30]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('undefined leaves the delay to the backoff; 0 retries at once', async () => {
    const { resilience, clock } = retrying({
      maxAttempts: 3,
      backoff: { base: 100, max: 100, jitter: 'none' },
      delay: (attempt) => (attempt === 1 ? undefined : 0),
    });
    const { at, fn } = failing(clock, 2);
    const s = settle(resilience.run(fn, { policy: 'p' }));
    await clock.advance(1000);
    expect(s.value).toBe('ok');
    expect(at).toEqual([0, 100, 100]);
  });

  it('Infinity ends the retries with the real error', async () => {
    const error = infraError('real');
    const { resilience, clock, ofType } = retrying({ maxAttempts: 5, delay: () => Infinity });
    const { at, fn } = failing(clock, 5, error);
    const s = settle(resilience.run(fn, { policy: 'p' }));
    await clock.advance(1000);
    expect(s.error).toBe(error);
    expect(at).toEqual([0]);
    expect(ofType('retry')).toEqual([]);
  });

  it('a longer Retry-After hint of a throttled error still wins over a shorter custom delay', async () => {
    const { resilience, clock } = retrying({
      maxAttempts: 2,
      retryOn: ['throttled'],
      backoff: { base: 10, max: 5000, jitter: 'none' },
      delay: () => 50,
    });
    const { at, fn } = failing(clock, 1, kindError('throttled', 'slow down', 700));
    const s = settle(resilience.run(fn, { policy: 'p' }));
    await clock.advance(1000);
    expect(s.value).toBe('ok');
    expect(at).toEqual([0, 700]);
  });

  it('a delay that throws fails the call with internal / callback_failed, the throw as its cause', async () => {
    const bug = new Error('bug in delay');
    const { resilience, clock, ofType } = retrying({
      maxAttempts: 3,
      delay: () => {
        throw bug;
      },
    });
    const { at, fn } = failing(clock, 3);
    const s = settle(resilience.run(fn, { policy: 'p' }));
    await clock.advance(1000);
    expect(s.error).toMatchObject({ kind: 'internal', code: 'callback_failed', policy: 'p', cause: bug });
    expect(at).toEqual([0]);
    expect(ofType('call')).toEqual([
      expect.objectContaining({ outcome: 'failure', code: 'callback_failed' }),
    ]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it.each([
    ['negative', -1],
    ['NaN', Number.NaN],
    ['a string', '100ms'],
    ['null', null],
  ])('a delay answering %s fails the call with internal / callback_failed', async (_label, answer) => {
    const error = infraError('real');
    const { resilience, clock } = retrying({ maxAttempts: 3, delay: () => answer as number });
    const { fn } = failing(clock, 3, error);
    const s = settle(resilience.run(fn, { policy: 'p' }));
    await clock.advance(1000);
    expect(s.error).toMatchObject({ kind: 'internal', code: 'callback_failed', cause: error });
    expect(String((s.error as Error).message)).toMatch(/RetryStrategy delay answered/);
  });

  it('property: every retry waits exactly what the function answered (finite, ≥ 0)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 10_000 }), { minLength: 1, maxLength: 6 }),
        async (ds) => {
          const { resilience, clock } = retrying({ maxAttempts: ds.length + 1, delay: (n) => ds[n - 1] });
          const { at, fn } = failing(clock, ds.length);
          const s = settle(resilience.run(fn, { policy: 'p' }));
          await clock.advance(100_000);
          expect(s.value).toBe('ok');
          const gaps = at.slice(1).map((t, i) => t - at[i]!);
          expect(gaps).toEqual(ds);
        },
      ),
      { numRuns: 50 },
    );
  });

  it('is validated with the other options: not a function is a violation', () => {
    expect(() => new RetryStrategy({ maxAttempts: 0, delay: 5 as never })).toThrow(
      /maxAttempts must be an integer ≥ 1, got 0; delay must be a function \(attempt, error\) => number \| undefined, got 5/,
    );
  });

  it('a JSON spec cannot carry it: policyFromSpec refuses it, policyToSpec leaves it out', () => {
    expect(() =>
      policyFromSpec({
        name: 'p',
        strategies: [{ type: 'retry', maxAttempts: 2, delay: () => 1 }],
      }),
    ).toThrow(/strategies\[0\]\.delay must be absent: a delay function cannot be expressed in JSON/);
    const spec = policyToSpec(policy('p', [new RetryStrategy({ maxAttempts: 2, delay: () => 1 })]));
    expect(spec.strategies[0]).not.toHaveProperty('delay');
  });
});
