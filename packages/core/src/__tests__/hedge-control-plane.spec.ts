import { HedgeStrategy } from '../strategies/hedge-strategy';
import { RetryBudget } from '../strategies/retry-budget';
import type { CallContext } from '../resilience-types';
import { deferred, infraError, settle, setup } from './helpers';
import { breaker, policy } from './kit';

/**
 * Hedging meets the control plane (SPEC §4 hedge, §6; Finagle #962, failsafe-go #65, #134, #141, Polly PR #1340). A hedge is a new request to the
 * dependency, admitted through the pipeline: a hedge that fires after the breaker opened is refused with
 * `circuit_open`, so a hedge that fires after an operator forced the route open is refused too — forced open is
 * the stronger switch, and it comes before any strategy.
 */

const hedgedPolicy = (maxAttempts = 2) =>
  policy('p', [breaker({ minThroughput: 1 })], { hedge: new HedgeStrategy({ delay: 100, maxAttempts }) });

/** Records each attempt's ctx and hands it a deferred the test settles. */
function attempts() {
  const list: { ctx: CallContext; d: ReturnType<typeof deferred<string>> }[] = [];
  const fn = (ctx: CallContext): Promise<string> => {
    const d = deferred<string>();
    list.push({ ctx, d });
    return d.promise;
  };
  return { list, fn };
}

describe('hedge and forceOpen', () => {
  it.each([
    [
      'the route',
      (r: { admin: { forceOpen(p: string, route?: string): Promise<void> } }) => r.admin.forceOpen('p', 'r'),
    ],
    [
      'the whole policy',
      (r: { admin: { forceOpen(p: string, route?: string): Promise<void> } }) => r.admin.forceOpen('p'),
    ],
  ])(
    'a hedge due after %s was forced open is refused before fn; the primary still finishes',
    async (_, force) => {
      const { resilience, clock, events } = setup([hedgedPolicy(3)]);
      const a = attempts();
      const s = settle(resilience.run(a.fn, { policy: 'p', route: 'r' }));
      await clock.advance(50);
      await force(resilience);
      await clock.advance(200); // both hedges come due
      expect(a.list).toHaveLength(1); // the dependency saw no hedge
      expect(
        events.map((e) => [e.type, 'code' in e ? e.code : 'attempt' in e ? e.attempt : undefined]),
      ).toEqual([
        ['control_applied', undefined], // the force-open, applied by this replica (SPEC §14.1)
        ['hedge_attempt', 2],
        ['rejected', 'resilience_forced_open'],
        ['hedge_attempt', 3],
        ['rejected', 'resilience_forced_open'],
      ]);
      expect(a.list[0]!.ctx.signal.aborted).toBe(false); // the call already running is left alone
      a.list[0]!.d.resolve('primary');
      await clock.advance(0);
      expect(s.value).toBe('primary');
      expect(events.at(-1)).toMatchObject({ type: 'call', outcome: 'success' });
      expect(clock.pendingTimers()).toBe(0);
    },
  );

  it('a hedge refused because of a force-open spends no hedge-budget token', async () => {
    // One token, and each call earns a tenth of one: a token spent on a refused hedge is gone for ten calls.
    const budgeted = policy('p', [], {
      hedge: new HedgeStrategy({ delay: 100, maxAttempts: 2, budget: new RetryBudget({ ratio: 0.1 }) }),
    });
    const { resilience, clock } = setup([budgeted]);
    const first = attempts();
    const s1 = settle(resilience.run(first.fn, { policy: 'p' }));
    await resilience.admin.forceOpen('p');
    await clock.advance(100); // the hedge comes due, and is refused
    first.list[0]!.d.resolve('one');
    await clock.advance(0);
    expect([s1.value, first.list.length]).toEqual(['one', 1]);
    await resilience.admin.clearForcedOpen('p');
    const second = attempts();
    const s2 = settle(resilience.run(second.fn, { policy: 'p' }));
    await clock.advance(100);
    expect(second.list).toHaveLength(2); // the token is still there: the hedge fires
    second.list[1]!.d.resolve('two');
    await clock.advance(0);
    expect(s2.value).toBe('two');
    expect(clock.pendingTimers()).toBe(0);
  });

  it('with its hedge budget exhausted, a forced-open call attempts no hedge at all (no refused hedge counted)', async () => {
    const budgeted = policy('p', [], {
      hedge: new HedgeStrategy({ delay: 100, maxAttempts: 2, budget: new RetryBudget({ ratio: 0.1 }) }),
    });
    const { resilience, clock, events } = setup([budgeted]);
    const first = attempts();
    const s1 = settle(resilience.run(first.fn, { policy: 'p' }));
    await clock.advance(100); // the only token goes to this hedge
    first.list[1]!.d.resolve('one');
    await clock.advance(0);
    expect(s1.value).toBe('one');
    const second = attempts();
    const s2 = settle(resilience.run(second.fn, { policy: 'p' }));
    await resilience.admin.forceOpen('p');
    await clock.advance(100);
    second.list[0]!.d.resolve('two');
    await clock.advance(0);
    expect(s2.value).toBe('two');
    expect(events.filter((e) => e.type === 'hedge_attempt' || e.type === 'rejected')).toHaveLength(1); // call 1's hedge
  });

  it('when the primary then fails, the call fails with its error, not with the refused hedge', async () => {
    const { resilience, clock } = setup([hedgedPolicy()]);
    const a = attempts();
    const s = settle(resilience.run(a.fn, { policy: 'p', route: 'r' }));
    await resilience.admin.forceOpen('p', 'r');
    await clock.advance(100);
    const boom = infraError('primary failed');
    a.list[0]!.d.reject(boom);
    await clock.advance(0);
    expect(a.list).toHaveLength(1);
    expect(s.error).toBe(boom);
  });

  it('a forceOpen made after a retune reaches a hedged call started before it', async () => {
    const { resilience, clock, ofType } = setup([hedgedPolicy()]);
    const a = attempts();
    const s = settle(resilience.run(a.fn, { policy: 'p', route: 'r' }));
    await clock.advance(10);
    await resilience.admin.retune(hedgedPolicy());
    await resilience.admin.forceOpen('p', 'r');
    await clock.advance(90);
    expect(a.list).toHaveLength(1);
    expect(ofType('rejected').map((e) => e.code)).toEqual(['resilience_forced_open']);
    a.list[0]!.d.resolve('primary');
    await clock.advance(0);
    expect(s.value).toBe('primary');
  });

  it('clearing the force-open before the hedge is due lets it fire', async () => {
    const { resilience, clock, ofType } = setup([hedgedPolicy()]);
    const a = attempts();
    const s = settle(resilience.run(a.fn, { policy: 'p', route: 'r' }));
    await resilience.admin.forceOpen('p', 'r');
    await resilience.admin.clearForcedOpen('p', 'r');
    await clock.advance(100);
    expect(a.list).toHaveLength(2);
    a.list[1]!.d.resolve('hedge');
    await clock.advance(0);
    expect(s.value).toBe('hedge');
    expect(ofType('rejected')).toEqual([]);
    expect(ofType('hedge_won')).toEqual([{ type: 'hedge_won', policy: 'p', route: 'r', attempt: 2 }]);
  });
});

describe('hedge and retune', () => {
  it('a call in flight keeps the hedge it started with (delay, maxAttempts) across a retune that removes it', async () => {
    const { resilience, clock, ofType } = setup([hedgedPolicy(3)]);
    const a = attempts();
    const s = settle(resilience.run(a.fn, { policy: 'p', route: 'r' }));
    await clock.advance(10);
    await resilience.admin.retune(policy('p', [breaker({ minThroughput: 1 })]));
    await clock.advance(500);
    expect(ofType('hedge_attempt').map((e) => [e.attempt, e.delay])).toEqual([
      [2, 100],
      [3, 100],
    ]);
    a.list[2]!.d.resolve('third');
    await clock.advance(0);
    expect(s.value).toBe('third');
    // a new call runs on the retuned policy: no hedge
    const b = attempts();
    const s2 = settle(resilience.run(b.fn, { policy: 'p', route: 'r' }));
    await clock.advance(500);
    expect(b.list).toHaveLength(1);
    b.list[0]!.d.resolve('plain');
    await clock.advance(0);
    expect(s2.value).toBe('plain');
    expect(clock.pendingTimers()).toBe(0);
  });
});
