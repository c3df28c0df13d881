import { ResilienceError } from '../errors/resilience-error';
import { RetryStrategy } from '../strategies/retry-strategy';
import { TimeoutStrategy } from '../strategies/timeout-strategy';
import type { CallContext } from '../resilience-types';
import { deferred, settle, setup } from './helpers';
import { breaker, codeOf, hang, policy } from './kit';
import { ON_ABORT, type AbortHook } from '../executor/attempt-context';

/** Attempt timeout through `run()` (SPEC §2, §4, §11.13; resilience4j #905, #1041; opossum #861). */

describe('timeout', () => {
  it('aborts the attempt signal with infrastructure / attempt_timeout and settles even when fn ignores it', async () => {
    const { resilience, clock, ofType } = setup([policy('p', [new TimeoutStrategy({ timeout: '250ms' })])]);
    let ctx: CallContext | undefined;
    const s = settle(
      resilience.run(
        (c) => {
          ctx = c;
          return hang();
        },
        { policy: 'p', route: 'r' },
      ),
    );
    await clock.advance(249);
    expect(s.done).toBe(false);
    expect(ctx!.signal.aborted).toBe(false);
    await clock.advance(1);
    expect(s.error).toBeInstanceOf(ResilienceError);
    expect(s.error).toMatchObject({
      kind: 'infrastructure',
      code: 'attempt_timeout',
      retryable: true,
      policy: 'p',
      route: 'r',
    });
    expect(ctx!.signal.reason).toBe(s.error);
    expect(ofType('attempt_timeout')).toEqual([
      { type: 'attempt_timeout', policy: 'p', route: 'r', attempt: 1, timeout: 250 },
    ]);
    expect(ofType('call')).toEqual([
      expect.objectContaining({ outcome: 'failure', code: 'attempt_timeout' }),
    ]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('a fn that honours its signal still ends with our attempt_timeout, not its own AbortError', async () => {
    const { resilience, clock } = setup([policy('p', [new TimeoutStrategy({ timeout: 100 })])]);
    const s = settle(
      resilience.run(
        (ctx) =>
          new Promise((_, reject) => {
            ctx.signal.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')));
          }),
        { policy: 'p' },
      ),
    );
    await clock.advance(100);
    expect(s.error).toMatchObject({ code: 'attempt_timeout' });
  });

  it('a late resolve or reject after the timeout is swallowed (no unhandled rejection, no double settle)', async () => {
    const { resilience, clock, ofType } = setup([policy('p', [new TimeoutStrategy({ timeout: 100 })])]);
    const late = [deferred(), deferred()];
    const runs = late.map((d) => settle(resilience.run(() => d.promise, { policy: 'p' })));
    await clock.advance(100);
    late[0]!.resolve('too late');
    late[1]!.reject(new Error('too late'));
    await clock.advance(1000);
    expect(runs.map((r) => (r.error as ResilienceError).code)).toEqual([
      'attempt_timeout',
      'attempt_timeout',
    ]);
    expect(ofType('call')).toHaveLength(2);
  });

  it('the breaker counts a timed-out call once, as a failure', async () => {
    const { resilience, clock } = setup([
      policy('p', [new TimeoutStrategy({ timeout: 100 }), breaker({ minThroughput: 10 })]),
    ]);
    settle(resilience.run(hang, { policy: 'p' }));
    await clock.advance(100);
    const [snap] = await resilience.admin.inspect({ policy: 'p' });
    expect(snap?.breaker).toEqual({ state: 'closed', calls: 1, failureRatio: 1 });
  });

  it('after one timeout, the next call gets a fresh, non-aborted signal (opossum #861)', async () => {
    const { resilience, clock } = setup([policy('p', [new TimeoutStrategy({ timeout: 100 })])]);
    const signals: AbortSignal[] = [];
    settle(
      resilience.run(
        (ctx) => {
          signals.push(ctx.signal);
          return hang();
        },
        { policy: 'p' },
      ),
    );
    await clock.advance(100);
    await resilience.run(
      (ctx) => {
        signals.push(ctx.signal);
        return 'fresh';
      },
      { policy: 'p' },
    );
    expect(signals[0]!.aborted).toBe(true);
    expect(signals[1]).not.toBe(signals[0]);
    expect(signals[1]!.aborted).toBe(false);
  });

  it('each retry attempt gets its own timeout, measured from its own start', async () => {
    const { resilience, clock, ofType } = setup([
      policy('p', [
        new TimeoutStrategy({ timeout: 100 }),
        new RetryStrategy({ maxAttempts: 2, backoff: { base: 50, max: 50, jitter: 'none' } }),
      ]),
    ]);
    const starts: number[] = [];
    const s = settle(
      resilience.run(
        async (ctx) => {
          starts.push(clock.now());
          if (ctx.attempt === 2) {
            await clock.sleep(90);
            return 'second attempt in time';
          }
          return hang();
        },
        { policy: 'p' },
      ),
    );
    await clock.advance(1000);
    expect(starts).toEqual([0, 150]);
    expect(s.value).toBe('second attempt in time'); // 90 ms < its own 100 ms, though 240 ms since the call began
    expect(ofType('attempt_timeout').map((e) => e.attempt)).toEqual([1]);
  });

  it('one shared clock timer serves every pending attempt timeout, of any duration; none is left after', async () => {
    const { resilience, clock } = setup([
      policy('a', [new TimeoutStrategy({ timeout: 100 })]),
      policy('b', [new TimeoutStrategy({ timeout: 300 })]),
    ]);
    const ds = Array.from({ length: 500 }, () => deferred());
    const runs = ds.map((d, i) => settle(resilience.run(() => d.promise, { policy: i % 2 ? 'a' : 'b' })));
    await clock.advance(0); // the queue arms its one timer a few promise hops after the burst
    expect(clock.pendingTimers()).toBe(1);
    ds.slice(0, 100).forEach((d) => d.resolve('ok'));
    await clock.advance(0);
    expect(clock.pendingTimers()).toBe(1);
    await clock.advance(100); // the 100 ms ones time out; the queue re-arms for the 300 ms ones
    expect(clock.pendingTimers()).toBe(1);
    await clock.advance(200);
    expect(clock.pendingTimers()).toBe(0);
    expect(runs.filter((r) => r.value === 'ok')).toHaveLength(100);
    expect(
      runs.filter((r) => (r.error as ResilienceError | undefined)?.code === 'attempt_timeout'),
    ).toHaveLength(400);
  });

  it('work that settles within a few promise hops never creates a clock timer', async () => {
    const { resilience, clock } = setup([policy('p', [new TimeoutStrategy({ timeout: 100 })])]);
    let created = 0;
    const setTimeoutOf = clock.setTimeout.bind(clock);
    clock.setTimeout = ((cb: () => void, ms: number) => {
      created++;
      return setTimeoutOf(cb, ms);
    }) as typeof clock.setTimeout;
    for (let i = 0; i < 100; i++) {
      await expect(resilience.run(async () => i, { policy: 'p' })).resolves.toBe(i);
    }
    // nor does work that takes a few promise hops (a trivial Nest handler crosses rxjs in 3–4)
    const hops = (n: number): Promise<number> =>
      n === 0 ? Promise.resolve(0) : hops(n - 1).then((x) => x + 1);
    for (let i = 0; i < 10; i++)
      await expect(resilience.run(() => hops(4), { policy: 'p' })).resolves.toBe(4);
    expect(created).toBe(0);
    const slow = settle(resilience.run(() => new Promise(() => {}), { policy: 'p' }));
    await clock.advance(100);
    expect(slow.error).toMatchObject({ code: 'attempt_timeout' });
    expect(created).toBeGreaterThan(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('a synchronous fn is never timed (no timer scheduled)', async () => {
    const { resilience, clock } = setup([policy('p', [new TimeoutStrategy({ timeout: 100 })])]);
    const p = resilience.run(() => 'sync', { policy: 'p' });
    expect(clock.pendingTimers()).toBe(0);
    await expect(p).resolves.toBe('sync');
  });
});

describe('ON_ABORT (the internal abort hook for integrations)', () => {
  it('is called once when the attempt times out, and at once when registered after the abort', async () => {
    const { resilience, clock } = setup([policy('p', [new TimeoutStrategy({ timeout: 50 })])]);
    const seen: unknown[] = [];
    let ctxSeen: CallContext | undefined;
    const s = settle(
      resilience.run(
        (ctx) => {
          ctxSeen = ctx;
          (ctx as unknown as { [ON_ABORT](h: AbortHook): void })[ON_ABORT]({
            attemptAborted: (reason) => seen.push(reason),
          });
          return hang();
        },
        { policy: 'p' },
      ),
    );
    await clock.advance(50);
    expect(codeOf(s.error)).toBe('attempt_timeout');
    expect(seen).toHaveLength(1);
    expect(codeOf(seen[0])).toBe('attempt_timeout');
    const late: unknown[] = [];
    (ctxSeen as unknown as { [ON_ABORT](h: AbortHook): void })[ON_ABORT]({
      attemptAborted: (reason) => late.push(reason),
    });
    expect(late).toEqual([seen[0]]);
    expect(clock.pendingTimers()).toBe(0);
  });
});
