import {
  CircuitBreakerStrategy,
  RateLimitStrategy,
  Resilience,
  ResiliencePolicy,
  type ResilienceEvent,
} from '@ballast/core';
import { FakeClock } from '@ballast/testing';
import type { DashboardSnapshot as PageSnapshot } from '../../../dashboard-ui/model';
import { HISTORY_LENGTH, LATENCY_SAMPLES, SnapshotAggregator, quantiles } from './snapshot-aggregator';

const call = (outcome: 'success' | 'failure' | 'rejected' | 'cancelled', duration: number, code?: string) =>
  ({
    type: 'call',
    policy: 'p',
    route: undefined,
    outcome,
    duration,
    ...(code === undefined ? {} : { code }),
  }) as ResilienceEvent;
const entry = { policy: 'p', route: null, forcedOpen: false, version: 0, mode: 'enforce' as const };

describe('SnapshotAggregator', () => {
  it('reports calls per second by outcome and rejections by code over the time since the last snapshot', () => {
    const agg = new SnapshotAggregator(0);
    for (let i = 0; i < 6; i++) agg.record(call('success', 10), 100);
    agg.record(call('failure', 10), 100);
    agg.record(call('rejected', 0, 'circuit_open'), 100);
    agg.record(call('rejected', 0, 'circuit_open'), 100);
    agg.record(call('rejected', 0, 'rate_limited'), 100);
    const snap = agg.take(['p'], [entry], 2000);
    expect(snap.interval).toBe(2000);
    expect(snap.entries).toEqual([
      expect.objectContaining({
        policy: 'p',
        route: null,
        rates: { success: 3, failure: 0.5, rejected: 1.5, cancelled: 0 },
        rejections: { circuit_open: 1, rate_limited: 0.5 },
      }),
    ]);
    // A new interval begins: nothing happened in it.
    const next = agg.take(['p'], [entry], 3000);
    expect(next.interval).toBe(1000);
    expect(next.entries[0]).toMatchObject({ rates: { success: 0, failure: 0, rejected: 0, cancelled: 0 } });
    expect(next.entries[0]!.rejections).toEqual({});
    expect(next.entries[0]!.latency).toBeUndefined();
  });

  it('shadow mode: refusals decided but not enforced are counted apart; the calls count by how they really ended', () => {
    const agg = new SnapshotAggregator(0);
    const shadowed = { type: 'rejected', policy: 'p', route: undefined, code: 'rate_limited', shadow: true };
    agg.record(shadowed as ResilienceEvent, 10);
    agg.record(shadowed as ResilienceEvent, 10);
    agg.record({ type: 'rejected', policy: 'p', route: undefined, code: 'rate_limited' }, 10); // enforced: its call counts
    agg.record(call('success', 10), 10);
    const snap = agg.take(['p'], [{ ...entry, mode: 'shadow' }], 1000);
    expect(snap.entries[0]).toMatchObject({
      mode: 'shadow',
      rates: { success: 1, failure: 0, rejected: 0, cancelled: 0 },
      rejections: {},
      shadowRejections: { rate_limited: 2 },
    });
    expect(agg.take(['p'], [entry], 2000).entries[0]).not.toHaveProperty('shadowRejections');
  });

  it('lists a (policy, route) that had calls even when the admin state does not', () => {
    const agg = new SnapshotAggregator(0);
    agg.record({ ...call('success', 5), policy: 'retry-only', route: 'eu' } as ResilienceEvent, 10);
    const snap = agg.take(['retry-only'], [], 1000);
    expect(snap.entries).toEqual([
      expect.objectContaining({
        policy: 'retry-only',
        route: 'eu',
        forcedOpen: false,
        rates: expect.any(Object),
      }),
    ]);
  });

  it('gives latency quantiles of the interval, sampling a busy route uniformly within a bound', () => {
    expect(quantiles([5, 1, 4, 2, 3, 6, 7, 8, 9, 10])).toEqual({
      p50: 5,
      p90: 9,
      p99: 10,
      max: 10,
      samples: 10,
    });
    const agg = new SnapshotAggregator(0);
    for (let i = 1; i <= 10_000; i++) agg.record(call('success', i / 100), 1);
    const { latency } = agg.take(['p'], [entry], 1000).entries[0]!;
    expect(latency!.samples).toBeLessThanOrEqual(LATENCY_SAMPLES);
    expect(latency!.samples).toBeGreaterThanOrEqual(LATENCY_SAMPLES / 2);
    // Uniform thinning of 1..10,000 (÷100): the quantiles stay where they are.
    expect(latency!.p50).toBeCloseTo(50, -1);
    expect(latency!.p90).toBeCloseTo(90, -1);
    expect(latency!.max).toBeGreaterThan(99);
  });

  it('keeps the last breaker transitions per key, with how long ago each was', () => {
    const agg = new SnapshotAggregator(0);
    const change = (from: string, to: string, at: number) =>
      agg.record({ type: 'breaker_state', policy: 'p', route: undefined, from, to } as ResilienceEvent, at);
    change('closed', 'open', 100);
    change('open', 'half-open', 600);
    change('half-open', 'closed', 700);
    expect(agg.take(['p'], [entry], 1000).entries[0]!.breakerHistory).toEqual([
      { from: 'closed', to: 'open', ago: 900 },
      { from: 'open', to: 'half-open', ago: 400 },
      { from: 'half-open', to: 'closed', ago: 300 },
    ]);
    // History outlives the interval, bounded.
    for (let i = 0; i < HISTORY_LENGTH + 5; i++) change('closed', 'open', 2000 + i);
    const history = agg.take(['p'], [entry], 3000).entries[0]!.breakerHistory;
    expect(history).toHaveLength(HISTORY_LENGTH);
    expect(history[HISTORY_LENGTH - 1]).toEqual({
      from: 'closed',
      to: 'open',
      ago: 3000 - (2000 + HISTORY_LENGTH + 4),
    });
  });

  it('aggregates a real Resilience on a FakeClock: a breaker that trips, its rejections, its history', async () => {
    const clock = new FakeClock();
    const resilience = new Resilience({
      clock,
      policies: [
        new ResiliencePolicy({
          name: 'guarded',
          strategies: [
            new CircuitBreakerStrategy({
              failureRatio: 0.5,
              samplingWindow: '10s',
              minThroughput: 2,
              breakDuration: '5s',
            }),
          ],
        }),
        new ResiliencePolicy({
          name: 'limited',
          strategies: [new RateLimitStrategy({ permits: 1, per: '1m' })],
        }),
      ],
    });
    const agg = new SnapshotAggregator(clock.now());
    resilience.on((e) => agg.record(e, clock.now()));
    const failing = async (): Promise<never> => {
      await clock.sleep(20);
      throw new Error('down');
    };
    for (let i = 0; i < 2; i++) {
      const done = resilience.run(failing, { policy: 'guarded' }).catch(() => undefined);
      await clock.advance(20);
      await done;
    }
    for (let i = 0; i < 3; i++)
      await resilience.run(async () => 1, { policy: 'guarded' }).catch(() => undefined);
    await resilience.run(async () => 1, { policy: 'limited', route: 'eu' });
    await resilience.run(async () => 1, { policy: 'limited', route: 'eu' }).catch(() => undefined);
    await clock.advance(1000 - 40);
    const state = (await resilience.admin.inspect()).map((s) => ({ ...s, route: s.route ?? null }));
    const snap = agg.take(await resilience.admin.policies(), state, clock.now());
    // The page reads what the server sends: its own copy of the wire types must accept the server's (compile time).
    const onTheWire: PageSnapshot = JSON.parse(JSON.stringify(snap)) as typeof snap;
    expect(onTheWire).toEqual(snap);
    const guarded = snap.entries.find((e) => e.policy === 'guarded')!;
    expect(guarded.breaker?.state).toBe('open');
    expect(guarded.rates).toEqual({ success: 0, failure: 2, rejected: 3, cancelled: 0 });
    expect(guarded.rejections).toEqual({ circuit_open: 3 });
    expect(guarded.latency).toMatchObject({ p50: 20, max: 20, samples: 2 }); // the two that ran, not the rejections
    expect(guarded.breakerHistory).toEqual([{ from: 'closed', to: 'open', ago: 1000 - 40 }]);
    const eu = snap.entries.find((e) => e.policy === 'limited' && e.route === 'eu')!;
    expect(eu.rates).toEqual({ success: 1, failure: 0, rejected: 1, cancelled: 0 });
    expect(eu.rejections).toEqual({ rate_limited: 1 });
    expect(eu.rateLimitTokens).toBeCloseTo(960 / 60_000); // refilled since the rejection
  });
});
