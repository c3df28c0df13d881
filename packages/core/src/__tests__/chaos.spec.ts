import { seededRandom } from '@ballast/testing';
import { ResilienceError } from '../errors/resilience-error';
import { BackoffStrategy } from '../strategies/backoff-strategy';
import { ChaosStrategy, type ChaosOptions } from '../strategies/chaos-strategy';
import { HedgeStrategy } from '../strategies/hedge-strategy';
import { RetryStrategy } from '../strategies/retry-strategy';
import { TimeoutStrategy } from '../strategies/timeout-strategy';
import type { Strategy } from '../strategies/strategy';
import { withDeadline } from '../context/deadline';
import { infraError, settle, setup } from './helpers';
import { codeOf, policy, runtimeOf } from './kit';

/** ChaosStrategy through `run()` (SPEC §14.3): fault, outcome, latency; draws, timeouts, aborts, timers. */

const on = (o: ChaosOptions): ChaosStrategy => new ChaosStrategy({ enabled: true, ...o });

/** A random source that answers `values` in turn, then `rest`; counts its draws. */
function scripted(values: number[], rest = 0.99) {
  const r = Object.assign(() => (r.draws++, values.length > 0 ? values.shift()! : rest), { draws: 0 });
  return r;
}

const NO_JITTER = new BackoffStrategy({ base: 10, max: 10, jitter: 'none' });

describe('chaos: injections', () => {
  it('a fault replaces the call: fn does not run, the attempt throws error(), chaos_injected says so', async () => {
    const boom = new Error('injected');
    const { resilience, ofType } = setup([policy('p', [on({ fault: { rate: 1, error: () => boom } })])]);
    const fn = jest.fn(() => 'real');
    await expect(resilience.run(fn, { policy: 'p', route: 'r' })).rejects.toBe(boom);
    expect(fn).not.toHaveBeenCalled();
    expect(ofType('chaos_injected')).toEqual([
      { type: 'chaos_injected', policy: 'p', route: 'r', injection: 'fault', attempt: 1 },
    ]);
    expect(ofType('call')).toEqual([expect.objectContaining({ outcome: 'failure', code: 'internal' })]);
  });

  it('a fault given as a message throws a plain Error with it (default message without one)', async () => {
    const { resilience } = setup([
      policy('p', [on({ fault: { rate: 1, message: 'db down (chaos)' } })]),
      policy('q', [on({ fault: { rate: 1 } })]),
    ]);
    const e = (await resilience.run(() => 1, { policy: 'p' }).catch((x: unknown) => x)) as Error;
    expect(e.constructor).toBe(Error);
    expect(e.message).toBe('db down (chaos)');
    await expect(resilience.run(() => 1, { policy: 'q' })).rejects.toThrow('Injected fault (chaos)');
  });

  it('a fault, then a retry that runs fn: the retry decision sees the injected error like any other', async () => {
    const random = scripted([0.1, 0.9]); // attempt 1: fault (0.1 < 0.5); attempt 2: no fault
    const { resilience, clock, ofType } = setup(
      [
        policy('p', [
          new RetryStrategy({ maxAttempts: 3, backoff: NO_JITTER }),
          on({ fault: { rate: 0.5, error: () => infraError() } }),
        ]),
      ],
      { random },
    );
    const fn = jest.fn(() => 'ok');
    const s = settle(resilience.run(fn, { policy: 'p' }));
    await clock.advance(10);
    expect(s.value).toBe('ok');
    expect(fn).toHaveBeenCalledTimes(1);
    expect(ofType('chaos_injected')).toEqual([expect.objectContaining({ injection: 'fault', attempt: 1 })]);
    expect(ofType('retry')).toEqual([expect.objectContaining({ attempt: 2, delay: 10 })]);
    expect(random.draws).toBe(2);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('a throwing error() fails the call with internal / callback_failed, which is not retried', async () => {
    const { resilience, ofType } = setup([
      policy('p', [
        new RetryStrategy({ maxAttempts: 3, backoff: NO_JITTER }),
        on({
          fault: {
            rate: 1,
            error: () => {
              throw new TypeError('bug in the experiment');
            },
          },
        }),
      ]),
    ]);
    const e = await resilience.run(() => 1, { policy: 'p' }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ResilienceError);
    expect(e).toMatchObject({ kind: 'internal', code: 'callback_failed', policy: 'p' });
    expect((e as Error).cause).toBeInstanceOf(TypeError);
    expect(ofType('retry')).toEqual([]);
  });

  it('an outcome replaces the call: fn does not run, run resolves with result()', async () => {
    const { resilience, ofType } = setup([
      policy('p', [on({ outcome: { rate: 1, result: () => ({ cached: true }) } })]),
      policy('q', [on({ outcome: { rate: 1, value: 'stale' } })]),
    ]);
    const fn = jest.fn(() => 'real');
    await expect(resilience.run(fn, { policy: 'p' })).resolves.toEqual({ cached: true });
    await expect(resilience.run(fn, { policy: 'q' })).resolves.toBe('stale');
    expect(fn).not.toHaveBeenCalled();
    expect(ofType('chaos_injected').map((e) => e.injection)).toEqual(['outcome', 'outcome']);
    expect(ofType('call').map((e) => e.outcome)).toEqual(['success', 'success']);
  });

  it('an injected outcome still passes through classifyResult: a failing result is retried, then returned', async () => {
    const { resilience, clock, ofType } = setup([
      policy(
        'p',
        [
          new RetryStrategy({ maxAttempts: 2, backoff: NO_JITTER }),
          on({ outcome: { rate: 1, value: { status: 503 } } }),
        ],
        {
          classifyResult: (r) =>
            (r as { status: number }).status >= 500 ? { kind: 'infrastructure' } : undefined,
        },
      ),
    ]);
    const fn = jest.fn();
    const s = settle(resilience.run(fn, { policy: 'p' }));
    await clock.advance(10);
    expect(s.value).toEqual({ status: 503 });
    expect(fn).not.toHaveBeenCalled();
    expect(ofType('chaos_injected')).toHaveLength(2);
    expect(ofType('retry')).toHaveLength(1);
    expect(ofType('call')).toEqual([expect.objectContaining({ outcome: 'failure', code: 'infrastructure' })]);
  });

  it('a throwing result() fails the call with internal / callback_failed', async () => {
    const { resilience } = setup([
      policy('p', [
        on({
          outcome: {
            rate: 1,
            result: () => {
              throw new Error('bug');
            },
          },
        }),
      ]),
    ]);
    const e = await resilience.run(() => 1, { policy: 'p' }).catch((x: unknown) => x);
    expect(codeOf(e)).toBe('callback_failed');
  });
});

describe('chaos: latency', () => {
  const slow = (extra: Strategy[] = [], delay = 100) =>
    setup([policy('p', [...extra, on({ latency: { rate: 1, delay } })])]);

  it('waits delay on the Resilience clock, then calls fn; no timer is left', async () => {
    const { resilience, clock, ofType } = slow();
    const fn = jest.fn(() => Promise.resolve('late'));
    const s = settle(resilience.run(fn, { policy: 'p', route: 'r' }));
    await clock.advance(99);
    expect(fn).not.toHaveBeenCalled();
    await clock.advance(1);
    expect(fn).toHaveBeenCalledTimes(1);
    expect(s.value).toBe('late');
    expect(ofType('chaos_injected')).toEqual([
      { type: 'chaos_injected', policy: 'p', route: 'r', injection: 'latency', attempt: 1, delay: 100 },
    ]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('a synchronous throw of fn after the delay fails the attempt', async () => {
    const { resilience, clock } = slow();
    const s = settle(
      resilience.run(
        () => {
          throw infraError('late failure');
        },
        { policy: 'p' },
      ),
    );
    await clock.advance(100);
    expect((s.error as Error).message).toBe('late failure');
  });

  it('meets the attempt timeout: attempt_timeout at the timeout, fn never runs, no timer left', async () => {
    const { resilience, clock, ofType } = slow([new TimeoutStrategy({ timeout: 200 })], 500);
    const fn = jest.fn(() => 'never');
    const s = settle(resilience.run(fn, { policy: 'p' }));
    await clock.advance(199);
    expect(s.done).toBe(false);
    await clock.advance(1);
    expect(s.error).toMatchObject({ kind: 'infrastructure', code: 'attempt_timeout' });
    await clock.advance(1000);
    expect(fn).not.toHaveBeenCalled();
    expect(ofType('attempt_timeout')).toHaveLength(1);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('latency shorter than the timeout only delays fn; the timeout counts from the attempt start', async () => {
    const { resilience, clock } = slow([new TimeoutStrategy({ timeout: 200 })], 150);
    const s = settle(resilience.run(() => clock.sleep(60).then(() => 'x'), { policy: 'p' }));
    await clock.advance(200); // 150 of latency + 50 of fn's 60: the timeout ends it
    expect(codeOf(s.error)).toBe('attempt_timeout');
    await clock.advance(100);
    expect(clock.pendingTimers()).toBe(0);
  });

  it("honours the caller's abort: run rejects at once with the reason, fn never runs", async () => {
    const { resilience, clock, ofType } = slow([], 1000);
    const ac = new AbortController();
    const fn = jest.fn();
    const s = settle(resilience.run(fn, { policy: 'p', signal: ac.signal }));
    await clock.advance(50);
    const reason = new Error('client went away');
    ac.abort(reason);
    await clock.advance(0);
    expect(s.error).toBe(reason);
    expect(ofType('call')).toEqual([expect.objectContaining({ outcome: 'cancelled' })]);
    await clock.advance(2000);
    expect(fn).not.toHaveBeenCalled();
    expect(clock.pendingTimers()).toBe(0);
  });

  it('is cut by the deadline, and by a listener that aborts the caller while chaos_injected is emitted', async () => {
    const { resilience, clock } = slow([], 1000);
    const fn = jest.fn();
    const s = settle(withDeadline(300, () => resilience.run(fn, { policy: 'p' }), clock));
    await clock.advance(300);
    expect(codeOf(s.error)).toBe('deadline_exceeded');
    const ac = new AbortController();
    const off = resilience.on((e) => {
      if (e.type === 'chaos_injected') ac.abort('stop');
    });
    const t = settle(resilience.run(fn, { policy: 'p', signal: ac.signal }));
    await clock.advance(0);
    expect(t.error).toBe('stop');
    off();
    await clock.advance(2000);
    expect(fn).not.toHaveBeenCalled();
    expect(clock.pendingTimers()).toBe(0);
  });

  it('a hedged attempt that loses during its injected latency never runs fn', async () => {
    const random = scripted([0.1, 0.9]); // primary: latency; hedge: none
    const { resilience, clock } = setup(
      [
        policy('p', [on({ latency: { rate: 0.5, delay: 1000 } })], {
          hedge: new HedgeStrategy({ delay: 50, maxAttempts: 2 }),
        }),
      ],
      { random },
    );
    const calls: number[] = [];
    const s = settle(resilience.run(() => (calls.push(clock.now()), 'hedge'), { policy: 'p' }));
    await clock.advance(50);
    expect(s.value).toBe('hedge');
    await clock.advance(2000);
    expect(calls).toEqual([50]);
    expect(clock.pendingTimers()).toBe(0);
  });
});

describe('chaos: draws', () => {
  it('disabled chaos injects nothing and draws nothing (the attempt checks one field)', async () => {
    const random = scripted([], 0);
    const { resilience, ofType } = setup(
      [policy('p', [new ChaosStrategy({ fault: { rate: 1 }, latency: { rate: 1, delay: 100 } })])],
      { random },
    );
    const pr = await runtimeOf(resilience, 'p');
    expect(pr.chaos?.enabled).toBe(false);
    expect(pr.chaosArmed).toBeUndefined();
    for (let i = 0; i < 100; i++) await expect(resilience.run(() => i, { policy: 'p' })).resolves.toBe(i);
    expect(random.draws).toBe(0);
    expect(ofType('chaos_injected')).toEqual([]);
  });

  it('draws fault, then outcome, then latency, one draw each until one hits', async () => {
    const random = scripted([0.7, 0.7, 0.1]); // fault misses, outcome misses, latency hits
    const { resilience, clock, ofType } = setup(
      [
        policy('p', [
          on({
            fault: { rate: 0.5 },
            outcome: { rate: 0.5, value: 'x' },
            latency: { rate: 0.5, delay: 10 },
          }),
        ]),
      ],
      { random },
    );
    const s = settle(resilience.run(() => 'real', { policy: 'p' }));
    await clock.advance(10);
    expect(s.value).toBe('real');
    expect(random.draws).toBe(3);
    expect(ofType('chaos_injected').map((e) => e.injection)).toEqual(['latency']);
  });

  // Binomial bounds on a seeded source: deterministic, so the test cannot flake; ±4.5σ would hold for any seed
  // but about one in 150 000.
  it('injects at the configured rates (effective rates per the draw order) within 4.5σ over 10 000 calls', async () => {
    const { resilience, ofType } = setup(
      [
        policy('p', [
          on({
            fault: { rate: 0.2 },
            outcome: { rate: 0.25, value: 'x' },
            latency: { rate: 0.5, delay: 0 },
          }),
        ]),
      ],
      { random: seededRandom(2026) },
    );
    const n = 10_000;
    for (let i = 0; i < n; i++) await resilience.run(() => 'real', { policy: 'p' }).catch(() => undefined);
    const count = (k: string) => ofType('chaos_injected').filter((e) => e.injection === k).length;
    // fault 0.2; outcome (1 − 0.2)·0.25 = 0.2; latency (1 − 0.2)(1 − 0.25)·0.5 = 0.3
    for (const [k, p] of [
      ['fault', 0.2],
      ['outcome', 0.2],
      ['latency', 0.3],
    ] as const) {
      const sigma = Math.sqrt(n * p * (1 - p));
      expect(Math.abs(count(k) - n * p)).toBeLessThanOrEqual(4.5 * sigma);
    }
  });
});
