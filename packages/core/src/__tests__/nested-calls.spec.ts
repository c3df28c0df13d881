import { FakeClock } from '@ballast/testing';
import { currentSignal } from '../context/context-storage';
import { Criticality, bindCriticality, currentCriticality } from '../context/criticality';
import { remainingTime, withDeadline } from '../context/deadline';
import { AdaptiveThrottleStrategy } from '../strategies/adaptive-throttle-strategy';
import { settle, setup } from './helpers';
import { breaker, codeOf, hang, policy } from './kit';

/**
 * Deadline and criticality across nested `run()` calls (SPEC §5, §11.3): a call made inside another call's `fn`
 * shares the caller's deadline; that shared deadline ending the nested call is the caller's budget running out,
 * never a dependency failure of the outer call — whichever of the two calls' deadline timers fires first. A tighter
 * deadline fn binds around the nested call is a timeout like any other.
 */

const nested = () =>
  setup([
    policy('outer', [breaker({ minThroughput: 1 })]),
    policy('throttled-outer', [new AdaptiveThrottleStrategy({ minThroughput: 1 })]),
    policy('inner', []),
  ]);

describe('nested calls and the deadline', () => {
  it('a nested call ending on the shared deadline first is not an outer breaker failure', async () => {
    // The deadline is measured on its own clock; each call converts it to the Resilience clock when it starts.
    // With real clocks the inner call, started later, computes a marginally earlier expiry and its timer fires
    // first; `deadlineClock` moving 5 ms while the Resilience clock stands still reproduces that.
    const { resilience, clock, ofType } = nested();
    const deadlineClock = new FakeClock();
    const s = settle(
      withDeadline(
        100,
        () =>
          resilience.run(
            async () => {
              await deadlineClock.advance(5);
              return resilience.run(hang, { policy: 'inner' });
            },
            { policy: 'outer' },
          ),
        deadlineClock,
      ),
    );
    await clock.advance(0); // both calls started, at Resilience time 0: the outer expires at 100, the inner at 95
    await clock.advance(95);
    expect(codeOf(s.error)).toBe('deadline_exceeded');
    const [snap] = await resilience.admin.inspect({ policy: 'outer' });
    expect(snap?.breaker).toEqual({ state: 'closed', failureRatio: 0, calls: 0 });
    expect(ofType('breaker_state')).toEqual([]);
    expect(ofType('call').map((e) => [e.policy, e.outcome, e.code])).toEqual([
      ['inner', 'failure', 'deadline_exceeded'],
      ['outer', 'failure', 'deadline_exceeded'],
    ]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('a tighter deadline fn binds around its nested call is a timeout like any other: the outer breaker counts it', async () => {
    const { resilience, clock, ofType } = nested();
    // The outer call has a deadline of its own, far away: what ends the nested call is fn's tighter one.
    const s = settle(
      withDeadline(
        10_000,
        () =>
          resilience.run(() => withDeadline(50, () => resilience.run(hang, { policy: 'inner' }), clock), {
            policy: 'outer',
          }),
        clock,
      ),
    );
    await clock.advance(50);
    expect(codeOf(s.error)).toBe('deadline_exceeded');
    const [snap] = await resilience.admin.inspect({ policy: 'outer' });
    expect(snap?.breaker?.state).toBe('open'); // one failure against minThroughput 1
    expect(ofType('breaker_state').map((e) => [e.policy, e.from, e.to])).toEqual([
      ['outer', 'closed', 'open'],
    ]);
    // Without a deadline of its own, the outer call counts it the same way.
    const t = settle(
      resilience.run(() => withDeadline(50, () => resilience.run(hang, { policy: 'inner' }), clock), {
        policy: 'throttled-outer',
      }),
    );
    await clock.advance(50);
    expect(codeOf(t.error)).toBe('deadline_exceeded');
    const throttle = (await resilience.admin.inspect({ policy: 'throttled-outer' }))[0];
    // one request, no accept: the window now sheds with probability (1 − 0) / (1 + 1)
    expect(throttle?.throttleRejectionProbability).toBe(0.5);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('the nested call sees the outer deadline and criticality, a tighter inner deadline on another clock, and its own signal', async () => {
    const { resilience, clock } = nested();
    const other = new FakeClock(10_000);
    const seen: unknown[] = [];
    const result = await withDeadline(
      1000,
      () =>
        bindCriticality(Criticality.CRITICAL, () =>
          resilience.run(
            async (outer) => {
              await clock.advance(100);
              const inherited = await resilience.run(
                (inner) => {
                  seen.push(remainingTime(), currentCriticality(), currentSignal() === inner.signal);
                  return inner.signal !== outer.signal;
                },
                { policy: 'inner' },
              );
              const tighter = await withDeadline(
                200,
                () =>
                  bindCriticality(Criticality.BEST_EFFORT, () =>
                    resilience.run(() => [remainingTime(), currentCriticality()], { policy: 'inner' }),
                  ),
                other,
              );
              return [inherited, tighter, remainingTime()];
            },
            { policy: 'outer' },
          ),
        ),
      clock,
    );
    expect(seen).toEqual([900, Criticality.CRITICAL, true]);
    expect(result).toEqual([true, [200, Criticality.BEST_EFFORT], 900]);
  });
});
