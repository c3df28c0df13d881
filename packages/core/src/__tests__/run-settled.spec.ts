import { ResilienceError } from '../errors/resilience-error';
import { RUN_SETTLED } from '../resilience';
import type { CallSettler } from '../executor/invocation';
import { RetryStrategy } from '../strategies/retry-strategy';
import { TimeoutStrategy } from '../strategies/timeout-strategy';
import { FallbackStrategy } from '../strategies/fallback-strategy';
import { infraError, setup } from './helpers';
import { breaker, codeOf, hang, policy } from './kit';

/**
 * The callback-style entry `@ballast/nestjs` uses (`resilience[RUN_SETTLED]`), and functions that return a thenable
 * which calls back inside `then` — both settle without promises of Ballast's own, so both must still hold every rule
 * of `run`: one settlement, no timer left behind, retries, fallback, cancellation.
 */

/** A thenable that settles inside `then`, as an rxjs-backed collector does for an observable that completes at once. */
function syncThenable(ok: boolean, result: unknown): PromiseLike<unknown> {
  return {
    then(onOk, onErr) {
      if (ok) onOk?.(result);
      else onErr?.(result);
      return undefined as never;
    },
  };
}

/** Lets more promise hops pass than the timer queue waits before it arms a clock timer. */
async function afterArmingHops(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

/** Records every settlement (there must be exactly one). */
function recorder() {
  const calls: { ok: boolean; result: unknown }[] = [];
  const settler: CallSettler = { settled: (ok, result) => void calls.push({ ok, result }) };
  return { calls, settler };
}

const full = () =>
  policy('p', [
    breaker(),
    new RetryStrategy({ maxAttempts: 3, backoff: { base: 1, max: 1, jitter: 'none' } }),
    new TimeoutStrategy({ timeout: '1s' }),
  ]);

describe('functions returning a thenable that calls back synchronously', () => {
  it('resolve: the call succeeds and leaves no timeout behind', async () => {
    const { resilience, clock } = setup([full()]);
    await expect(resilience.run(() => syncThenable(true, 7), { policy: 'p' })).resolves.toBe(7);
    await afterArmingHops();
    expect(clock.pendingTimers()).toBe(0);
  });

  it('reject: retried after the backoff, then the last error; no timeout behind', async () => {
    const { resilience, clock, ofType } = setup([full()]);
    const err = infraError();
    let attempts = 0;
    const p = resilience.run(
      () => {
        attempts++;
        return syncThenable(false, err);
      },
      { policy: 'p' },
    );
    const settled = expect(p).rejects.toBe(err);
    await clock.advance(2);
    await settled;
    expect(attempts).toBe(3);
    expect(ofType('retry')).toHaveLength(2);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('a thenable that calls back twice settles the attempt once', async () => {
    const { resilience, ofType } = setup([full()]);
    const twice: PromiseLike<unknown> = {
      then(onOk, onErr) {
        onOk?.(1);
        onErr?.(infraError());
        onOk?.(2);
        return undefined as never;
      },
    };
    await expect(resilience.run(() => twice, { policy: 'p' })).resolves.toBe(1);
    expect(ofType('retry')).toHaveLength(0);
    expect(ofType('call')).toEqual([expect.objectContaining({ outcome: 'success' })]);
  });
});

describe('resilience[RUN_SETTLED]', () => {
  it('calls the settler once with the value, and leaves no timer behind', async () => {
    const { resilience, clock } = setup([full()]);
    const { calls, settler } = recorder();
    resilience[RUN_SETTLED](async () => 'v', { policy: 'p' }, settler);
    expect(calls).toEqual([]);
    await clock.advance(0);
    expect(calls).toEqual([{ ok: true, result: 'v' }]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('a synchronous fn settles before it returns', () => {
    const { resilience } = setup([full()]);
    const { calls, settler } = recorder();
    resilience[RUN_SETTLED](() => 5, { policy: 'p' }, settler);
    expect(calls).toEqual([{ ok: true, result: 5 }]);
  });

  it('an unknown policy settles at once with configuration / unknown_policy (never a throw)', () => {
    const { resilience } = setup([full()]);
    const { calls, settler } = recorder();
    resilience[RUN_SETTLED](() => 1, { policy: 'nope' }, settler);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.ok).toBe(false);
    expect(calls[0]!.result).toBeInstanceOf(ResilienceError);
    expect(calls[0]!.result).toMatchObject({ kind: 'configuration', code: 'unknown_policy' });
  });

  it('an already-aborted signal settles at once with its reason, and fn never runs', () => {
    const { resilience, ofType } = setup([full()]);
    const { calls, settler } = recorder();
    const ac = new AbortController();
    const reason = new Error('gone');
    ac.abort(reason);
    let ran = false;
    resilience[RUN_SETTLED](
      () => {
        ran = true;
      },
      { policy: 'p', signal: ac.signal },
      settler,
    );
    expect(ran).toBe(false);
    expect(calls).toEqual([{ ok: false, result: reason }]);
    expect(ofType('call')).toEqual([expect.objectContaining({ outcome: 'cancelled' })]);
  });

  it('the caller aborting mid-call settles at once, aborts ctx.signal and frees the timeout', async () => {
    const { resilience, clock } = setup([full()]);
    const { calls, settler } = recorder();
    const ac = new AbortController();
    let signal: AbortSignal | undefined;
    resilience[RUN_SETTLED](
      (ctx) => {
        signal = ctx.signal;
        return hang();
      },
      { policy: 'p', signal: ac.signal },
      settler,
    );
    await clock.advance(10);
    expect(calls).toEqual([]);
    const reason = new Error('client went away');
    ac.abort(reason);
    await clock.advance(0);
    expect(calls).toEqual([{ ok: false, result: reason }]);
    expect(signal!.aborted).toBe(true);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('timeouts, retries and the policy fallback apply as with run()', async () => {
    const p = policy(
      'p',
      [
        new RetryStrategy({ maxAttempts: 2, backoff: { base: 1, max: 1, jitter: 'none' } }),
        new TimeoutStrategy({ timeout: 100 }),
      ],
      { fallback: new FallbackStrategy({ fallback: (err) => `fallback after ${codeOf(err)}` }) },
    );
    const { resilience, clock, ofType } = setup([p]);
    const { calls, settler } = recorder();
    resilience[RUN_SETTLED](hang, { policy: 'p' }, settler);
    await clock.advance(100);
    expect(calls).toEqual([]);
    await clock.advance(101);
    expect(calls).toEqual([{ ok: true, result: 'fallback after attempt_timeout' }]);
    expect(ofType('attempt_timeout')).toHaveLength(2);
    expect(clock.pendingTimers()).toBe(0);
  });
});
