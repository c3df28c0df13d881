import { ResilienceError } from '../errors/resilience-error';
import { BulkheadStrategy } from '../strategies/bulkhead-strategy';
import { HedgeStrategy, type HedgeStrategyOptions } from '../strategies/hedge-strategy';
import { RateLimitStrategy } from '../strategies/rate-limit-strategy';
import { RetryStrategy } from '../strategies/retry-strategy';
import { TimeoutStrategy } from '../strategies/timeout-strategy';
import type { Strategy } from '../strategies/strategy';
import type { CallContext } from '../resilience-types';
import { deferred, infraError, settle, setup } from './helpers';
import { codeOf, hang, policy, trackedController } from './kit';

/** Hedging (SPEC §4, §11.8, §11.13; Finagle #962, failsafe-go #65, #134, #141, Polly PR #1340). */

function hedged(h: HedgeStrategyOptions, strategies: readonly Strategy[] = []) {
  return setup([policy('p', strategies, { hedge: new HedgeStrategy(h) })]);
}

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

describe('hedge: fixed delay', () => {
  it('fires after the delay; the hedge wins; the loser is aborted with a distinct reason, the winner never', async () => {
    const { resilience, clock, ofType } = hedged({ delay: 100, maxAttempts: 2 });
    const a = attempts();
    const caller = trackedController();
    const s = settle(resilience.run(a.fn, { policy: 'p', signal: caller.signal }));
    await clock.advance(99);
    expect(a.list).toHaveLength(1);
    await clock.advance(1);
    expect(a.list).toHaveLength(2);
    expect(ofType('hedge_attempt')).toEqual([
      { type: 'hedge_attempt', policy: 'p', route: undefined, attempt: 2, delay: 100 },
    ]);
    const [primary, hedge] = [a.list[0]!, a.list[1]!];
    expect(hedge.ctx.attempt).toBe(1); // each hedged attempt counts its own attempts (SPEC §11.8)
    hedge.d.resolve('hedge');
    await clock.advance(0);
    expect(s.value).toBe('hedge');
    expect(ofType('hedge_won')).toEqual([{ type: 'hedge_won', policy: 'p', route: undefined, attempt: 2 }]);
    expect(primary.ctx.signal.aborted).toBe(true);
    const lost = primary.ctx.signal.reason as ResilienceError;
    expect(lost).toBeInstanceOf(ResilienceError);
    expect(lost.code).toBe('hedge_lost');
    expect(lost.code).not.toBe('attempt_timeout');
    // the winner's signal is never aborted, not even later (SPEC §11.13; failsafe-go #65)
    primary.d.resolve('late');
    await clock.runAll();
    expect(hedge.ctx.signal.aborted).toBe(false);
    caller.ac.abort(new Error('after the fact'));
    expect(hedge.ctx.signal.aborted).toBe(false);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('the primary may still win: the hedge is aborted and no hedge_won is emitted', async () => {
    const { resilience, clock, ofType } = hedged({ delay: 100, maxAttempts: 3 });
    const a = attempts();
    const s = settle(resilience.run(a.fn, { policy: 'p' }));
    await clock.advance(150);
    a.list[0]!.d.resolve('primary');
    await clock.advance(0);
    expect(s.value).toBe('primary');
    expect(a.list[1]!.ctx.signal.reason).toMatchObject({ code: 'hedge_lost' });
    expect(a.list[0]!.ctx.signal.aborted).toBe(false);
    expect(ofType('hedge_won')).toHaveLength(0);
    await clock.advance(1000);
    expect(a.list).toHaveLength(2); // the third hedge never fires after the call settled
    expect(clock.pendingTimers()).toBe(0);
  });

  it('launches at most maxAttempts − 1 hedges, one per delay', async () => {
    const { resilience, clock, ofType } = hedged({ delay: 50, maxAttempts: 3 });
    const a = attempts();
    const s = settle(resilience.run(a.fn, { policy: 'p' }));
    await clock.advance(1000);
    expect(a.list).toHaveLength(3);
    expect(ofType('hedge_attempt').map((e) => e.attempt)).toEqual([2, 3]);
    a.list[2]!.d.resolve('third');
    await clock.advance(0);
    expect(s.value).toBe('third');
    expect(ofType('hedge_won')[0]?.attempt).toBe(3);
    expect(a.list.slice(0, 2).map((x) => codeOf(x.ctx.signal.reason))).toEqual(['hedge_lost', 'hedge_lost']);
  });

  it('hedge: false on the call skips the hedge (non-idempotent work)', async () => {
    const { resilience, clock } = hedged({ delay: 10, maxAttempts: 2 });
    const a = attempts();
    settle(resilience.run(a.fn, { policy: 'p', hedge: false }));
    await clock.advance(1000);
    expect(a.list).toHaveLength(1);
    a.list[0]!.d.resolve('x');
  });
});

describe('hedge: fires on slowness, not failure', () => {
  it('the primary failing while a hedge runs keeps the schedule: attempts start at 0, 1000 and 2000, not at once (README, Hedge)', async () => {
    const { resilience, clock, ofType } = hedged({ delay: 1000, maxAttempts: 3 });
    const a = attempts();
    const starts: number[] = [];
    const s = settle(
      resilience.run(
        (ctx) => {
          starts.push(clock.now());
          return a.fn(ctx);
        },
        { policy: 'p' },
      ),
    );
    await clock.advance(1500);
    expect(starts).toEqual([0, 1000]);
    a.list[0]!.d.reject(infraError());
    await clock.advance(499);
    expect(starts).toEqual([0, 1000]);
    await clock.advance(1);
    expect(starts).toEqual([0, 1000, 2000]);
    a.list[2]!.d.resolve('third');
    await clock.advance(0);
    expect(s.value).toBe('third');
    expect(ofType('hedge_attempt').map((e) => e.attempt)).toEqual([2, 3]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('a fast failure of the primary fails the call at once, without a hedge', async () => {
    const { resilience, clock, ofType } = hedged({ delay: 100, maxAttempts: 3 });
    let calls = 0;
    const boom = infraError('fast failure');
    const s = settle(
      resilience.run(
        async () => {
          calls++;
          await clock.sleep(10);
          throw boom;
        },
        { policy: 'p' },
      ),
    );
    await clock.advance(10);
    expect(s.error).toBe(boom);
    await clock.advance(1000);
    expect(calls).toBe(1);
    expect(ofType('hedge_attempt')).toHaveLength(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('a failure while a hedge runs waits for the hedge', async () => {
    const { resilience, clock } = hedged({ delay: 100, maxAttempts: 2 });
    const a = attempts();
    const s = settle(resilience.run(a.fn, { policy: 'p' }));
    await clock.advance(100);
    a.list[0]!.d.reject(infraError('primary failed'));
    await clock.advance(0);
    expect(s.done).toBe(false);
    a.list[1]!.d.resolve('hedge');
    await clock.advance(0);
    expect(s.value).toBe('hedge');
  });

  it.each([
    ['primary fails last', [1, 0]],
    ['hedge fails last', [0, 1]],
  ] as const)('when every attempt fails, the last error is thrown (%s)', async (_, order) => {
    const { resilience, clock } = hedged({ delay: 100, maxAttempts: 2 });
    const a = attempts();
    const s = settle(resilience.run(a.fn, { policy: 'p' }));
    await clock.advance(100);
    const errors = [infraError('primary'), infraError('hedge')];
    for (const i of order) {
      a.list[i]!.d.reject(errors[i]);
      await clock.advance(1);
    }
    expect(s.error).toBe(errors[order[1]]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('an inner attempt timeout fails only its own attempt, never the hedge (Polly PR #1340)', async () => {
    const { resilience, clock, ofType } = hedged({ delay: 100, maxAttempts: 2 }, [
      new TimeoutStrategy({ timeout: 150 }),
    ]);
    const a = attempts();
    const s = settle(resilience.run(a.fn, { policy: 'p' }));
    await clock.advance(150); // the primary times out; the hedge started at 100 keeps running
    expect(a.list[0]!.ctx.signal.reason).toMatchObject({ code: 'attempt_timeout' });
    expect(a.list[1]!.ctx.signal.aborted).toBe(false);
    expect(s.done).toBe(false);
    await clock.advance(50);
    a.list[1]!.d.resolve('hedge');
    await clock.advance(0);
    expect(s.value).toBe('hedge');
    expect(ofType('attempt_timeout')).toHaveLength(1);
    expect(clock.pendingTimers()).toBe(0);
  });
});

describe('hedge: budget', () => {
  it('a budget limits hedges, and an exhausted budget never kills in-flight attempts (failsafe-go #141)', async () => {
    const { resilience, clock, ofType } = hedged({
      delay: 100,
      maxAttempts: 2,
      budget: { ratio: 0.5 },
    });
    // budget cap = max(1, 0·0.5) = 1 token, starts full: the first call may hedge, the second may not
    const first = attempts();
    const s1 = settle(resilience.run(first.fn, { policy: 'p' }));
    await clock.advance(100);
    expect(first.list).toHaveLength(2);
    first.list[1]!.d.resolve('hedged');
    await clock.advance(0);
    expect(s1.value).toBe('hedged');

    const second = attempts();
    const s2 = settle(resilience.run(second.fn, { policy: 'p' }));
    await clock.advance(500);
    expect(second.list).toHaveLength(1);
    expect(second.list[0]!.ctx.signal.aborted).toBe(false);
    second.list[0]!.d.resolve('primary');
    await clock.advance(0);
    expect(s2.value).toBe('primary');
    expect(ofType('hedge_attempt')).toHaveLength(1);

    // one more call earns 0.5 → 1 token again: the next call hedges
    await resilience.run(() => 'earn', { policy: 'p' });
    const third = attempts();
    settle(resilience.run(third.fn, { policy: 'p' }));
    await clock.advance(100);
    expect(third.list).toHaveLength(2);
    third.list[0]!.d.resolve('x');
    await clock.advance(0);
  });
});

describe('hedge: each hedged attempt passes through the pipeline', () => {
  it('a rate limit counts each hedged attempt; a rate-limited hedge does not fail the call', async () => {
    const { resilience, clock, ofType } = hedged({ delay: 100, maxAttempts: 3 }, [
      new RateLimitStrategy({ permits: 2, per: '1h' }),
    ]);
    const a = attempts();
    const s = settle(resilience.run(a.fn, { policy: 'p' }));
    await clock.advance(200);
    expect(a.list).toHaveLength(2); // primary + one hedge took both tokens; the third was rate limited
    expect(ofType('rejected').map((e) => e.code)).toEqual(['rate_limited']);
    expect(ofType('hedge_attempt')).toHaveLength(2);
    a.list[0]!.d.resolve('primary');
    await clock.advance(0);
    expect(s.value).toBe('primary');
    const [snap] = await resilience.admin.inspect({ policy: 'p' });
    expect(snap?.rateLimitTokens).toBeCloseTo(0, 3);
  });

  it('a bulkhead gives each hedged attempt its own slot; the losing primary gives its slot back even when it ignores its signal', async () => {
    const { resilience, clock } = hedged({ delay: 100, maxAttempts: 2 }, [
      new BulkheadStrategy({ maxConcurrency: 5 }),
    ]);
    const hedge = deferred<string>();
    let n = 0;
    const s = settle(resilience.run(() => (++n === 1 ? hang() : hedge.promise), { policy: 'p' }));
    await clock.advance(100);
    let [snap] = await resilience.admin.inspect({ policy: 'p' });
    expect(snap?.inUse).toBe(2);
    hedge.resolve('hedge');
    await clock.advance(0);
    expect(s.value).toBe('hedge');
    [snap] = await resilience.admin.inspect({ policy: 'p' });
    expect(snap?.inUse).toBe(0);
  });

  it('each hedged attempt retries on its own, with its own attempt count', async () => {
    const { resilience, clock } = hedged({ delay: 100, maxAttempts: 2 }, [
      new RetryStrategy({ maxAttempts: 2, backoff: { base: 10, max: 10, jitter: 'none' } }),
    ]);
    const a = attempts();
    const s = settle(resilience.run(a.fn, { policy: 'p' }));
    await clock.advance(100);
    a.list[1]!.d.reject(infraError()); // the hedge fails and retries after 10 ms
    await clock.advance(10);
    expect(a.list.map((x) => x.ctx.attempt)).toEqual([1, 1, 2]);
    a.list[2]!.d.resolve('hedge retry');
    await clock.advance(0);
    expect(s.value).toBe('hedge retry');
    expect(a.list[0]!.ctx.signal.reason).toMatchObject({ code: 'hedge_lost' });
  });
});

describe('hedge: adaptive delay', () => {
  const adaptive = { delay: 100, maxAttempts: 2, adaptiveDelayQuantile: 0.5, delayMin: 20, delayMax: 60 };

  async function primaries(r: ReturnType<typeof setup>, latency: number, count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      const s = settle(
        r.resilience.run(
          async () => {
            await r.clock.sleep(latency);
            return i;
          },
          { policy: 'p' },
        ),
      );
      await r.clock.advance(latency);
      expect(s.value).toBe(i);
    }
  }

  it('uses the fixed delay until warm, then the observed quantile clamped to [delayMin, delayMax]', async () => {
    const r = hedged(adaptive);
    const delayNow = async () => (await r.resilience.admin.inspect({ policy: 'p' }))[0]?.hedgeDelay;
    await primaries(r, 40, 4);
    expect(await delayNow()).toBe(100); // still warming: the fixed delay
    await primaries(r, 40, 1);
    expect(await delayNow()).toBe(40);
    await primaries(r, 5, 20);
    expect(await delayNow()).toBe(20); // clamped up to delayMin
    await primaries(r, 90, 40);
    expect(await delayNow()).toBe(60); // clamped down to delayMax
    // (while the delay was 20 ms, those 90 ms primaries were hedged — and still won, being first)
    expect(r.ofType('hedge_won')).toHaveLength(0);
    const before = r.ofType('hedge_attempt').length;
    // a slow primary is now hedged after 60 ms, not 100
    const a = attempts();
    settle(r.resilience.run(a.fn, { policy: 'p' }));
    await r.clock.advance(60);
    expect(a.list).toHaveLength(2);
    expect(
      r
        .ofType('hedge_attempt')
        .slice(before)
        .map((e) => e.delay),
    ).toEqual([60]);
    a.list[1]!.d.resolve('x');
    await r.clock.advance(0);
    expect(r.clock.pendingTimers()).toBe(0);
  });
  it('learns from slowness, not failure: fast failures of the primary leave the delay alone', async () => {
    const r = hedged({ ...adaptive, delayMin: 1, delayMax: 1000 });
    const delayNow = async () => (await r.resilience.admin.inspect({ policy: 'p' }))[0]?.hedgeDelay;
    await primaries(r, 50, 5);
    expect(await delayNow()).toBe(50);
    for (let i = 0; i < 30; i++) {
      const s = settle(
        r.resilience.run(
          async () => {
            await r.clock.sleep(2);
            throw infraError();
          },
          { policy: 'p' },
        ),
      );
      await r.clock.advance(2);
      expect(s.error).toMatchObject({ code: 'ECONNRESET' });
    }
    expect(await delayNow()).toBe(50); // a failing dependency must not make the policy hedge harder
    expect(r.ofType('hedge_attempt')).toHaveLength(0);
  });

  it('a primary that times out counts as slow (its timeout is a lower bound of its latency)', async () => {
    const r = hedged({ ...adaptive, delayMin: 1, delayMax: 1000 }, [new TimeoutStrategy({ timeout: 80 })]);
    const delayNow = async () => (await r.resilience.admin.inspect({ policy: 'p' }))[0]?.hedgeDelay;
    await primaries(r, 30, 5);
    expect(await delayNow()).toBe(30);
    for (let i = 0; i < 6; i++) {
      const s = settle(r.resilience.run(hang, { policy: 'p' }));
      await r.clock.advance(1000); // the primary and its hedge both time out
      expect(codeOf(s.error)).toBe('attempt_timeout');
    }
    expect(await delayNow()).toBeGreaterThan(30);
    expect(r.clock.pendingTimers()).toBe(0);
  });

  it('a primary that loses the race counts with its latency so far (a lower bound), not as a fast sample', async () => {
    const r = hedged({ ...adaptive, delayMin: 1, delayMax: 1000 });
    const delayNow = async () => (await r.resilience.admin.inspect({ policy: 'p' }))[0]?.hedgeDelay;
    await primaries(r, 30, 5);
    expect(await delayNow()).toBe(30);
    for (let i = 0; i < 10; i++) {
      const delay = (await delayNow())!;
      expect(delay).toBeLessThan(60);
      const a = attempts();
      const s = settle(r.resilience.run(a.fn, { policy: 'p' }));
      await r.clock.advance(delay); // the hedge starts at the current delay …
      expect(a.list).toHaveLength(2);
      await r.clock.advance(60 - delay);
      a.list[1]!.d.resolve('hedge'); // … and wins 60 ms after the primary started
      await r.clock.advance(0);
      expect(s.value).toBe('hedge');
      expect(a.list[0]!.ctx.signal.reason).toMatchObject({ code: 'hedge_lost' });
    }
    // The primaries that lost were at least 60 ms slow: the median moves up towards 60, never down.
    expect(await delayNow()).toBeGreaterThan(45);
  });
});
