import fc from 'fast-check';
import { classify, composeClassifier, retryAfterOf } from '../errors/classify';
import { ResilienceError } from '../errors/resilience-error';
import { BulkheadStrategy } from '../strategies/bulkhead-strategy';
import { RetryStrategy } from '../strategies/retry-strategy';
import { breaker, errorOf, policy } from './kit';
import { setup, settle } from './helpers';

/**
 * Errors with getters that throw (lazy or guarded properties, Proxies): classification must never throw, or the
 * user's error is replaced by the getter's and what the call held (a bulkhead slot, a breaker lease) is never given
 * back.
 */
const throwingGetter = (key: string): object =>
  Object.defineProperty({ message: 'odd' }, key, {
    enumerable: true,
    get(): never {
      throw new Error(`getter ${key}`);
    },
  });

const KEYS = ['code', 'cause', 'name', 'status', 'statusCode', 'response', 'headers'] as const;

describe('odd errors', () => {
  it('classify, composeClassifier and retryAfterOf never throw on getters or Proxy traps that throw', () => {
    const trap = new Proxy(
      {},
      {
        get(): never {
          throw new Error('trap');
        },
        ownKeys(): never {
          throw new Error('trap');
        },
      },
    );
    const user = composeClassifier(() => undefined);
    fc.assert(
      fc.property(fc.subarray([...KEYS], { minLength: 1 }), (keys) => {
        const error: object = keys.reduce<object>(
          (o, k) =>
            Object.defineProperty(o, k, {
              get(): never {
                throw new Error(k);
              },
            }),
          { message: 'odd' },
        );
        expect(classify(error)).toBe('internal');
        expect(user(error)).toBe('internal');
        expect(retryAfterOf(error)).toBeUndefined();
      }),
    );
    expect(classify(trap)).toBe('internal');
    expect(user(trap)).toBe('internal');
    expect(retryAfterOf(trap)).toBeUndefined();
    expect(retryAfterOf({ headers: trap })).toBeUndefined();
    // The other properties still count: a network code behind a throwing `status` getter.
    expect(classify(Object.assign(throwingGetter('status'), { code: 'ECONNRESET' }))).toBe('infrastructure');
  });

  it.each(KEYS)(
    'a call failing with an error whose %s getter throws rejects with that error and gives its slot back',
    async (key) => {
      const { resilience, ofType } = setup([
        policy('p', [
          new BulkheadStrategy({ maxConcurrency: 1 }),
          breaker({ minThroughput: 1, failureRatio: 1 }),
        ]),
      ]);
      const odd = throwingGetter(key);
      expect(await errorOf(resilience.run(() => Promise.reject(odd), { policy: 'p' }))).toBe(odd);
      const [snap] = await resilience.admin.inspect({ policy: 'p' });
      expect(snap?.inUse).toBe(0);
      // Unclassifiable is internal, a failure: the breaker counted it.
      expect(snap?.breaker?.state).toBe('open');
      expect(ofType('call').map((e) => e.outcome)).toEqual(['failure']);
    },
  );

  it('a call failing with a revoked Proxy (every trap throws, instanceof too) rejects with it and gives its slot back', async () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    // A user classifier that calls anything it cannot read infrastructure, so the retry decision sees it too.
    const { resilience, ofType, clock } = setup(
      [
        policy('p', [
          new RetryStrategy({
            maxAttempts: 2,
            retryOn: ['infrastructure'],
            backoff: { base: 10, max: 10, jitter: 'none' },
          }),
          new BulkheadStrategy({ maxConcurrency: 1 }),
          breaker({ minThroughput: 1, failureRatio: 1 }),
        ]),
        policy('q', [new BulkheadStrategy({ maxConcurrency: 1 })]),
      ],
      { classify: (e) => (e === proxy ? 'infrastructure' : undefined) },
    );
    let calls = 0;
    const fail = (): Promise<never> => {
      calls++;
      return Promise.reject(proxy);
    };
    const first = settle(resilience.run(fail, { policy: 'p' }));
    await clock.advance(10);
    // Compared by identity: jest cannot even print a revoked Proxy.
    expect(first.done).toBe(true);
    expect(first.error === proxy).toBe(true);
    expect(calls).toBe(2);
    const second = settle(resilience.run(fail, { policy: 'q' }));
    await clock.advance(0);
    expect(second.error === proxy).toBe(true);
    for (const snap of await resilience.admin.inspect()) expect(snap.inUse ?? 0).toBe(0);
    expect(ofType('call').map((e) => [e.policy, e.outcome, e.code])).toEqual([
      ['p', 'failure', 'infrastructure'],
      ['q', 'failure', 'infrastructure'],
    ]);
  });

  it('a Retry-After too large to be a delay is no hint, and an infinite retryAfter does not hang the retry', async () => {
    expect(retryAfterOf({ status: 429, headers: { 'retry-after': 1e306 } })).toBeUndefined();
    const { resilience, clock } = setup([
      policy('p', [
        new RetryStrategy({ maxAttempts: 2, retryOn: ['throttled'], backoff: { base: 10, max: 10 } }),
      ]),
    ]);
    const forever = new ResilienceError({ kind: 'throttled', retryAfter: Infinity });
    let calls = 0;
    const call = settle(
      resilience.run(
        () => {
          calls++;
          return Promise.reject(forever);
        },
        { policy: 'p' },
      ),
    );
    await clock.advance(0);
    expect(call).toMatchObject({ done: true, error: forever });
    expect(calls).toBe(1);
    expect(clock.pendingTimers()).toBe(0);
  });
});
