import { currentSignal } from '../context/context-storage';
import { remainingTime, withDeadline } from '../context/deadline';
import { BulkheadStrategy } from '../strategies/bulkhead-strategy';
import { FallbackStrategy } from '../strategies/fallback-strategy';
import { HedgeStrategy } from '../strategies/hedge-strategy';
import { RetryStrategy } from '../strategies/retry-strategy';
import { TimeoutStrategy } from '../strategies/timeout-strategy';
import { deferred, infraError, settle, setup } from './helpers';
import { breaker, codeOf, hang, policy } from './kit';

/** The invocation deadline gates the whole chain and aborts the signal when it expires (SPEC §4, §5, §11.3). */

describe('deadline', () => {
  it('an expired deadline rejects before fn runs with timeout / deadline_exceeded', async () => {
    const { resilience, clock, ofType } = setup([policy('p', [])]);
    let ran = false;
    const s = settle(
      withDeadline(
        10,
        async () => {
          await clock.sleep(10);
          return resilience.run(() => (ran = true), { policy: 'p', route: 'r' });
        },
        clock,
      ),
    );
    await clock.advance(10);
    expect(ran).toBe(false);
    expect(s.error).toMatchObject({ kind: 'timeout', code: 'deadline_exceeded', policy: 'p', route: 'r' });
    expect(ofType('rejected')).toHaveLength(0); // not a strategy rejection
    expect(ofType('call')).toEqual([
      expect.objectContaining({ outcome: 'failure', code: 'deadline_exceeded' }),
    ]);
  });

  it('expiry during an attempt aborts ctx.signal with deadline_exceeded and releases the bulkhead slot', async () => {
    const { resilience, clock } = setup([policy('p', [new BulkheadStrategy({ maxConcurrency: 1 })])]);
    let signal: AbortSignal | undefined;
    const s = settle(
      withDeadline(
        '1s',
        () =>
          resilience.run(
            (ctx) => {
              signal = ctx.signal;
              return hang();
            },
            { policy: 'p' },
          ),
        clock,
      ),
    );
    await clock.advance(1000);
    expect(codeOf(s.error)).toBe('deadline_exceeded');
    expect(signal!.reason).toBe(s.error);
    const [snap] = await resilience.admin.inspect({ policy: 'p' });
    expect(snap?.inUse).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  it.each(['at the start', 'during the call'])(
    'the fallback covers a deadline that expires %s, and the call outcome is a failure either way',
    async (when) => {
      const { resilience, clock, ofType } = setup([
        policy('p', [], {
          fallback: new FallbackStrategy({ fallback: (e) => `policy fallback: ${codeOf(e)}` }),
        }),
        policy('bare', []),
      ]);
      const within = (run: () => Promise<unknown>) =>
        settle(
          withDeadline(
            10,
            async () => {
              if (when === 'at the start') await clock.sleep(10);
              return run();
            },
            clock,
          ),
        );
      const fn = () => (when === 'at the start' ? 'ran' : hang());
      const viaPolicy = within(() => resilience.run(fn, { policy: 'p' }));
      const perCall = within(() =>
        resilience.run(fn, { policy: 'bare', fallback: () => 'per-call fallback' }),
      );
      const without = within(() => resilience.run(fn, { policy: 'bare' }));
      await clock.advance(10);
      await clock.advance(0);
      expect(viaPolicy.value).toBe('policy fallback: deadline_exceeded');
      expect(perCall.value).toBe('per-call fallback');
      expect(codeOf(without.error)).toBe('deadline_exceeded');
      const failed = ofType('call').filter((e) => e.policy === 'bare' && e.outcome !== 'success');
      expect(failed).toEqual([expect.objectContaining({ outcome: 'failure', code: 'deadline_exceeded' })]);
      expect(clock.pendingTimers()).toBe(0);
    },
  );

  it("a caller's own abort is still a cancellation, not a failure", async () => {
    const { resilience, clock, ofType } = setup([policy('p', [])]);
    const ac = new AbortController();
    const s = settle(
      withDeadline('1m', () => resilience.run(() => hang(), { policy: 'p', signal: ac.signal }), clock),
    );
    await clock.advance(0);
    ac.abort(new Error('caller went away'));
    await clock.advance(0);
    expect(s.error).toMatchObject({ message: 'caller went away' });
    expect(ofType('call')).toEqual([expect.objectContaining({ outcome: 'cancelled' })]);
  });

  it('fn sees the deadline through remainingTime() and its signal through currentSignal()', async () => {
    const { resilience, clock } = setup([policy('p', [])]);
    const seen: unknown[] = [];
    const s = settle(
      withDeadline(
        500,
        () =>
          resilience.run(
            async (ctx) => {
              await clock.sleep(100);
              seen.push(remainingTime(), currentSignal() === ctx.signal);
            },
            { policy: 'p' },
          ),
        clock,
      ),
    );
    await clock.advance(100);
    expect(s.done).toBe(true);
    expect(seen).toEqual([400, true]);
  });

  it('the tighter of deadline and attempt timeout wins', async () => {
    const { resilience, clock } = setup([
      policy('p', [
        new TimeoutStrategy({ timeout: 300 }),
        new RetryStrategy({ maxAttempts: 5, backoff: { base: 10, max: 10, jitter: 'none' } }),
      ]),
    ]);
    let attempts = 0;
    const s = settle(
      withDeadline(
        500,
        () =>
          resilience.run(
            () => {
              attempts++;
              return hang();
            },
            { policy: 'p' },
          ),
        clock,
      ),
    );
    await clock.advance(300);
    expect(attempts).toBe(1); // timed out at 300, retry sleeps 10 ms
    await clock.advance(10);
    expect(attempts).toBe(2);
    await clock.advance(190); // the second attempt's own timeout (610) is later than the deadline (500)
    expect(codeOf(s.error)).toBe('deadline_exceeded');
    expect(clock.pendingTimers()).toBe(0);
  });

  it('a waiter parked in the bulkhead leaves the queue at its deadline, without fn running', async () => {
    const { resilience, clock } = setup([
      policy('p', [new BulkheadStrategy({ maxConcurrency: 1, maxQueue: 5 })]),
    ]);
    const holder = deferred();
    settle(resilience.run(() => holder.promise, { policy: 'p' }));
    let ran = false;
    const s = settle(withDeadline(200, () => resilience.run(() => (ran = true), { policy: 'p' }), clock));
    await clock.advance(0);
    expect((await resilience.admin.inspect({ policy: 'p' }))[0]?.waiting).toBe(1);
    await clock.advance(200);
    expect(codeOf(s.error)).toBe('deadline_exceeded');
    expect(ran).toBe(false);
    expect((await resilience.admin.inspect({ policy: 'p' }))[0]).toMatchObject({ waiting: 0, inUse: 1 });
    holder.resolve(1);
    await clock.advance(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('deadline expiry is an abort we caused: it is not recorded by the breaker', async () => {
    const { resilience, clock } = setup([policy('p', [breaker({ minThroughput: 1 })])]);
    settle(withDeadline(100, () => resilience.run(hang, { policy: 'p' }), clock));
    await clock.advance(100);
    const [snap] = await resilience.admin.inspect({ policy: 'p' });
    expect(snap?.breaker).toEqual({ state: 'closed', calls: 0, failureRatio: 0 });
  });

  it('ends every hedged attempt at once', async () => {
    const { resilience, clock } = setup([
      policy('p', [], { hedge: new HedgeStrategy({ delay: 50, maxAttempts: 3 }) }),
    ]);
    const signals: AbortSignal[] = [];
    const s = settle(
      withDeadline(
        120,
        () =>
          resilience.run(
            (ctx) => {
              signals.push(ctx.signal);
              return hang();
            },
            { policy: 'p' },
          ),
        clock,
      ),
    );
    await clock.advance(120);
    expect(codeOf(s.error)).toBe('deadline_exceeded');
    expect(signals).toHaveLength(3);
    expect(signals.every((x) => codeOf(x.reason) === 'deadline_exceeded')).toBe(true);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('the retry loop gives up with the real error rather than sleep into the deadline', async () => {
    const { resilience, clock } = setup([
      policy('p', [
        new RetryStrategy({ maxAttempts: 3, backoff: { base: 1000, max: 1000, jitter: 'none' } }),
      ]),
    ]);
    const real = infraError('real');
    const s = settle(
      withDeadline(999, () => resilience.run(() => Promise.reject(real), { policy: 'p' }), clock),
    );
    await clock.advance(0);
    expect(s.error).toBe(real);
    expect(clock.pendingTimers()).toBe(0);
  });
});
