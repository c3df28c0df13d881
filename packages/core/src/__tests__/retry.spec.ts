import { withDeadline } from '../context/deadline';
import { RetryStrategy, type RetryOptions } from '../strategies/retry-strategy';
import { BackoffStrategy } from '../strategies/backoff-strategy';
import type { CallContext } from '../resilience-types';
import { infraError, settle, setup } from './helpers';
import { kindError, policy } from './kit';

/** Retry through `run()` (SPEC §4): maxAttempts counts the first, retryOn, backoff, budget, retryAfter, deadline. */

const retrying = (o: RetryOptions, extra: Parameters<typeof setup>[1] = {}) =>
  setup([policy('p', [new RetryStrategy(o)])], extra);

/** fn failing with `errors[i]` on attempt i+1, then succeeding with 'ok'. Records attempts and times. */
function script(clock: { now(): number }, errors: unknown[]) {
  const seen: { attempt: number; at: number }[] = [];
  const fn = (ctx: CallContext): Promise<string> => {
    seen.push({ attempt: ctx.attempt, at: clock.now() });
    const e = errors[ctx.attempt - 1];
    return e === undefined ? Promise.resolve('ok') : Promise.reject(e);
  };
  return { seen, fn };
}

describe('retry', () => {
  it('maxAttempts counts the first attempt; the last error is thrown; one retry event per retry', async () => {
    const { resilience, clock, ofType } = retrying({
      maxAttempts: 3,
      backoff: { base: 100, max: 1000, jitter: 'none' },
    });
    const errors = [infraError('1'), infraError('2'), infraError('3'), infraError('4')];
    const { seen, fn } = script(clock, errors);
    const s = settle(resilience.run(fn, { policy: 'p' }));
    await clock.advance(10_000);
    expect(s.error).toBe(errors[2]);
    expect(seen).toEqual([
      { attempt: 1, at: 0 },
      { attempt: 2, at: 100 },
      { attempt: 3, at: 300 },
    ]);
    expect(ofType('retry').map(({ attempt, delay, error }) => ({ attempt, delay, error }))).toEqual([
      { attempt: 2, delay: 100, error: errors[0] },
      { attempt: 3, delay: 200, error: errors[1] },
    ]);
    expect(ofType('call')).toEqual([
      expect.objectContaining({ outcome: 'failure', duration: 300, code: 'infrastructure' }),
    ]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('many synchronous failures retried without delay do not grow the stack (a loop, not recursion)', async () => {
    // the built-in backoff never returns 0 (base > 0), a subclass may: immediate retries
    class NoDelay extends BackoffStrategy {
      override delay(): number {
        return 0;
      }
    }
    const { resilience } = retrying({ maxAttempts: 100_000, backoff: new NoDelay({ base: 1, max: 1 }) });
    let calls = 0;
    const error = infraError();
    const failing = (): never => {
      calls++;
      throw error;
    };
    await expect(resilience.run(failing, { policy: 'p' })).rejects.toMatchObject({ code: 'ECONNRESET' });
    expect(calls).toBe(100_000);
  });

  it('stops as soon as an attempt succeeds', async () => {
    const { resilience, clock } = retrying({
      maxAttempts: 5,
      backoff: { base: 10, max: 10, jitter: 'none' },
    });
    const { seen, fn } = script(clock, [infraError()]);
    const s = settle(resilience.run(fn, { policy: 'p' }));
    await clock.advance(100);
    expect(s.value).toBe('ok');
    expect(seen.map((x) => x.attempt)).toEqual([1, 2]);
  });

  it('retries only kinds in retryOn (default infrastructure)', async () => {
    const { resilience, clock, ofType } = retrying({
      maxAttempts: 3,
      backoff: { base: 1, max: 1, jitter: 'none' },
    });
    for (const e of [
      kindError('validation'),
      kindError('throttled'),
      kindError('concurrency'),
      new Error('x'),
    ]) {
      const { seen, fn } = script(clock, [e, e, e]);
      const s = settle(resilience.run(fn, { policy: 'p' }));
      await clock.advance(10);
      expect(s.error).toBe(e);
      expect(seen).toHaveLength(1);
    }
    expect(ofType('retry')).toHaveLength(0);

    const occ = retrying({
      maxAttempts: 3,
      retryOn: ['concurrency'],
      backoff: { base: 1, max: 1, jitter: 'none' },
    });
    const { seen, fn } = script(occ.clock, [kindError('concurrency'), infraError()]);
    const s = settle(occ.resilience.run(fn, { policy: 'p' }));
    await occ.clock.advance(10);
    expect(seen).toHaveLength(2); // the infrastructure error of attempt 2 is not in retryOn
    expect(s.error).toMatchObject({ code: 'ECONNRESET' });
  });

  it('honours the retryAfter of a throttled error when longer than the backoff, ignores it when shorter', async () => {
    const { resilience, clock, ofType } = retrying({
      maxAttempts: 3,
      retryOn: ['throttled'],
      // a hint is honoured up to max (a longer one ends the retries: retry-after-bound.spec.ts)
      backoff: { base: 100, max: 1000, multiplier: 1, jitter: 'none' },
    });
    const { seen, fn } = script(clock, [
      kindError('throttled', 'slow down', 750),
      kindError('throttled', 'x', 20),
    ]);
    const s = settle(resilience.run(fn, { policy: 'p' }));
    await clock.advance(2000);
    expect(s.value).toBe('ok');
    expect(seen.map((x) => x.at)).toEqual([0, 750, 850]);
    expect(ofType('retry').map((e) => e.delay)).toEqual([750, 100]);
  });

  it('honours an HTTP 429 Retry-After header (seconds)', async () => {
    const { resilience, clock } = retrying({
      maxAttempts: 2,
      retryOn: ['throttled'],
      backoff: { base: 10, max: '2s', jitter: 'none' },
    });
    const e429 = Object.assign(new Error('429'), { status: 429, headers: { 'retry-after': '2' } });
    const { seen, fn } = script(clock, [e429]);
    settle(resilience.run(fn, { policy: 'p' }));
    await clock.advance(5000);
    expect(seen.map((x) => x.at)).toEqual([0, 2000]);
  });

  it('a budget caps retries: each call earns ratio tokens, each retry spends one', async () => {
    const { resilience, clock, ofType } = retrying({
      maxAttempts: 3,
      backoff: { base: 1, max: 1, jitter: 'none' },
      budget: { ratio: 0.5 },
    });
    const attemptsOf = async () => {
      const { seen, fn } = script(clock, [infraError(), infraError(), infraError()]);
      settle(resilience.run(fn, { policy: 'p' }));
      await clock.advance(10);
      return seen.length;
    };
    // cap = max(1, 0·0.5) = 1 token, full at start
    expect(await attemptsOf()).toBe(2); // one retry spends the only token
    expect(await attemptsOf()).toBe(1); // 0.5 earned: not enough
    expect(await attemptsOf()).toBe(2); // 1.0 earned
    expect(ofType('retry')).toHaveLength(2);
  });

  it('calls refused by a force-open earn no budget tokens: they never reach the dependency', async () => {
    const { resilience, clock } = retrying({
      maxAttempts: 3,
      backoff: { base: 1, max: 1, jitter: 'none' },
      budget: { ratio: 0.5 },
    });
    const attemptsOf = async () => {
      const { seen, fn } = script(clock, [infraError(), infraError(), infraError()]);
      settle(resilience.run(fn, { policy: 'p' }));
      await clock.advance(10);
      return seen.length;
    };
    expect(await attemptsOf()).toBe(2); // spends the only token
    await resilience.admin.forceOpen('p');
    for (let i = 0; i < 4; i++) {
      await expect(resilience.run(() => 1, { policy: 'p' })).rejects.toMatchObject({
        code: 'resilience_forced_open',
      });
    }
    await resilience.admin.clearForcedOpen('p');
    expect(await attemptsOf()).toBe(1); // 0.5 earned by this call alone: not enough
  });

  it('a retry the deadline rules out spends no budget token', async () => {
    const { resilience, clock } = retrying({
      maxAttempts: 2,
      backoff: { base: 100, max: 100, jitter: 'none' },
      budget: { ratio: 0.1 }, // one token, full at start; calls earn 0.1 each
    });
    const first = script(clock, [infraError()]);
    const s = settle(withDeadline(50, () => resilience.run(first.fn, { policy: 'p' }), clock));
    await clock.advance(0);
    expect(s.error).toMatchObject({ code: 'ECONNRESET' }); // a 100 ms backoff would outlive the 50 ms deadline
    expect(first.seen).toHaveLength(1);
    const second = script(clock, [infraError()]);
    const t = settle(resilience.run(second.fn, { policy: 'p' }));
    await clock.advance(100);
    expect(t.value).toBe('ok'); // the token is still there for this retry
    expect(second.seen).toHaveLength(2);
  });

  it('never sleeps past the deadline: when the next backoff would outlive it, the real error is thrown at once', async () => {
    const { resilience, clock, ofType } = retrying({
      maxAttempts: 10,
      backoff: { base: 100, max: 100, jitter: 'none' },
    });
    const errors = Array.from({ length: 10 }, (_, i) => infraError(`attempt ${i + 1}`));
    const { seen, fn } = script(clock, errors);
    const s = settle(withDeadline(250, () => resilience.run(fn, { policy: 'p' }), clock));
    await clock.advance(200);
    expect(s.error).toBe(errors[2]); // at t=200, a 100 ms backoff would end at the deadline: give up now
    expect(seen.map((x) => x.at)).toEqual([0, 100, 200]);
    expect(ofType('retry')).toHaveLength(2);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('draws jitter from the injected random', async () => {
    const { resilience, clock, ofType } = retrying(
      { maxAttempts: 3, backoff: { base: 100, max: 1000, jitter: 'full' } },
      { random: () => 0.5 },
    );
    const { fn } = script(clock, [infraError(), infraError()]);
    settle(resilience.run(fn, { policy: 'p' }));
    await clock.advance(1000);
    expect(ofType('retry').map((e) => e.delay)).toEqual([50, 100]); // full jitter: random · exp
  });

  it('the built-in transient policy retries infrastructure errors 3 times with a 30 s attempt timeout', async () => {
    const { resilience, clock } = setup([]);
    const { seen, fn } = script(clock, [infraError(), infraError(), infraError()]);
    const s = settle(resilience.run(fn, { policy: 'transient' }));
    await clock.advance(60_000);
    expect(seen).toHaveLength(3);
    expect(s.error).toMatchObject({ code: 'ECONNRESET' });
    const hung = settle(resilience.run(() => new Promise(() => {}), { policy: 'transient' }));
    await clock.advance(30_000);
    expect(hung.done).toBe(false); // the first attempt timed out and is retried
    await clock.advance(200_000);
    expect(hung.error).toMatchObject({ code: 'attempt_timeout' });
    expect(clock.pendingTimers()).toBe(0);
  });
});
