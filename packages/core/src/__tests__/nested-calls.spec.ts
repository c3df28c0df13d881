import { FakeClock } from '@ballast/testing';
import { currentSignal } from '../context/context-storage';
import { Criticality, bindCriticality, currentCriticality } from '../context/criticality';
import { remainingTime, withDeadline } from '../context/deadline';
import { AdaptiveThrottleStrategy } from '../strategies/adaptive-throttle-strategy';
import { settle, setup } from './helpers';
import { breaker, codeOf, hang, policy } from './kit';

/**
 * Deadline and criticality across nested `run()` calls (SPEC §5, §11.3): a call made inside another call's `fn`
 * shares the caller's deadline; a deadline that ends the nested call is a caller's budget running out, never a
 * dependency failure of the outer call — whichever of the two calls' deadline timers fires first, and whoever bound it.
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

  it('a tighter deadline fn binds around its nested call is a caller budget too: not recorded by the breaker or the throttle', async () => {
    const { resilience, clock } = nested();
    for (const p of ['outer', 'throttled-outer']) {
      for (let i = 0; i < 3; i++) {
        const s = settle(
          resilience.run(() => withDeadline(50, () => resilience.run(hang, { policy: 'inner' }), clock), {
            policy: p,
          }),
        );
        await clock.advance(50);
        expect(codeOf(s.error)).toBe('deadline_exceeded');
      }
    }
    const snaps = await resilience.admin.inspect();
    expect(snaps.find((x) => x.policy === 'outer')?.breaker).toEqual({
      state: 'closed',
      failureRatio: 0,
      calls: 0,
    });
    // no request was recorded: an accepted-less window would shed
    expect(snaps.find((x) => x.policy === 'throttled-outer')?.throttleRejectionProbability).toBe(0);
  });

  it("a coalesced request that another caller's deadline ended is no failure for a caller with time left", async () => {
    // Single-flight / DataLoader: two callers await one shared request; the first caller's budget ends it.
    const { resilience, clock, ofType } = nested();
    let shared: Promise<unknown> | undefined;
    const load = () => (shared ??= resilience.run(hang, { policy: 'inner' }));
    const a = settle(withDeadline(50, () => resilience.run(load, { policy: 'outer', route: 'a' }), clock));
    const b = settle(withDeadline(500, () => resilience.run(load, { policy: 'outer', route: 'b' }), clock));
    await clock.advance(50);
    expect([codeOf(a.error), codeOf(b.error)]).toEqual(['deadline_exceeded', 'deadline_exceeded']);
    for (const snap of await resilience.admin.inspect({ policy: 'outer' }))
      expect(snap.breaker).toEqual({ state: 'closed', failureRatio: 0, calls: 0 });
    expect(ofType('breaker_state')).toEqual([]);
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
