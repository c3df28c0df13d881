import { Criticality, bindCriticality } from '../context/criticality';
import type { Resilience } from '../resilience';
import { AdaptiveBulkheadStrategy } from '../strategies/adaptive-bulkhead-strategy';
import { BulkheadStrategy } from '../strategies/bulkhead-strategy';
import { GradientBulkheadStrategy } from '../strategies/gradient-bulkhead-strategy';
import { RetryStrategy } from '../strategies/retry-strategy';
import { TimeoutStrategy } from '../strategies/timeout-strategy';
import { deferred, infraError, settle, setup } from './helpers';
import { breaker, codeOf, errorOf, hang, kindError, policy, trackedController } from './kit';

/** Bulkheads through `run()` (SPEC §4 "Bulkheads"): admission, queueing, sheds, and slots released exactly once. */

const snap = async (r: Resilience, p = 'p') => (await r.admin.inspect({ policy: p }))[0]!;

describe('bulkhead through run()', () => {
  it('a full bulkhead without a queue rejects at once with infrastructure / bulkhead_full; fn never runs', async () => {
    const { resilience, ofType } = setup([policy('p', [new BulkheadStrategy({ maxConcurrency: 2 })])]);
    const ds = [deferred(), deferred()];
    ds.forEach((d) => settle(resilience.run(() => d.promise, { policy: 'p' })));
    let ran = false;
    const err = await errorOf(resilience.run(() => (ran = true), { policy: 'p', route: undefined }));
    expect(ran).toBe(false);
    expect(err).toMatchObject({ kind: 'infrastructure', code: 'bulkhead_full', policy: 'p' });
    expect(ofType('rejected').map((e) => e.code)).toEqual(['bulkhead_full']);
    expect(ofType('call').map((e) => e.outcome)).toEqual(['rejected']);
    expect(await snap(resilience)).toMatchObject({ concurrencyLimit: 2, inUse: 2, waiting: 0 });
  });

  it('parked waiters are served in arrival order and a newcomer never overtakes them', async () => {
    const { resilience, clock } = setup([
      policy('p', [new BulkheadStrategy({ maxConcurrency: 1, maxQueue: 4 })]),
    ]);
    const order: string[] = [];
    const holder = deferred();
    settle(resilience.run(() => holder.promise, { policy: 'p' }));
    const runs = ['a', 'b', 'c'].map((n) =>
      settle(resilience.run(() => void order.push(n), { policy: 'p' })),
    );
    await clock.advance(0);
    expect(await snap(resilience)).toMatchObject({ inUse: 1, waiting: 3 });
    holder.resolve(1);
    // a newcomer arriving in the same tick as the release must queue behind a, b, c
    const late = settle(resilience.run(() => void order.push('late'), { policy: 'p' }));
    await clock.advance(0);
    expect(order).toEqual(['a', 'b', 'c', 'late']);
    expect(runs.every((r) => r.done) && late.done).toBe(true);
    expect(await snap(resilience)).toMatchObject({ inUse: 0, waiting: 0 });
  });

  it('releases its slot on every path: success, failure, sync throw, timeout, retries exhausted, breaker rejection', async () => {
    const { resilience, clock } = setup([
      policy('p', [
        new BulkheadStrategy({ maxConcurrency: 1 }),
        new TimeoutStrategy({ timeout: 100 }),
        new RetryStrategy({ maxAttempts: 2, backoff: { base: 10, max: 10, jitter: 'none' } }),
        breaker({ minThroughput: 100 }),
      ]),
    ]);
    const paths: (() => unknown)[] = [
      () => 'ok',
      () => Promise.resolve('ok'),
      () => Promise.reject(kindError('validation')),
      () => {
        throw new Error('sync');
      },
      hang,
      () => Promise.reject(infraError()),
    ];
    for (const fn of paths) {
      const s = settle(resilience.run(fn, { policy: 'p' }));
      await clock.advance(1000);
      expect(s.done).toBe(true);
      expect((await snap(resilience)).inUse).toBe(0);
    }
    await resilience.admin.forceOpen('p'); // forced-open rejects before any strategy: no slot taken
    await expect(resilience.run(() => 1, { policy: 'p' })).rejects.toMatchObject({
      code: 'resilience_forced_open',
    });
    expect((await snap(resilience)).inUse).toBe(0);
  });

  it('the breaker never sees a bulkhead rejection; an open breaker gives the slot back', async () => {
    const { resilience, clock } = setup([
      policy('p', [breaker({ minThroughput: 1 }), new BulkheadStrategy({ maxConcurrency: 1 })]),
    ]);
    const holder = deferred();
    settle(resilience.run(() => holder.promise, { policy: 'p' }));
    for (let i = 0; i < 5; i++) {
      await expect(resilience.run(() => 1, { policy: 'p' })).rejects.toMatchObject({ code: 'bulkhead_full' });
    }
    expect((await snap(resilience)).breaker).toMatchObject({ state: 'closed', calls: 0 });
    holder.reject(infraError());
    await clock.advance(0);
    expect((await snap(resilience)).breaker?.state).toBe('open');
    await expect(resilience.run(() => 1, { policy: 'p' })).rejects.toMatchObject({ code: 'circuit_open' });
    expect((await snap(resilience)).inUse).toBe(0);
  });

  it('a full queue rejects with bulkhead_full; CoDel sheds at dequeue with bulkhead_queue_shed', async () => {
    const { resilience, clock, ofType } = setup([
      policy('p', [
        new BulkheadStrategy({ maxConcurrency: 1, maxQueue: 2, queueTarget: 5, queueInterval: 50 }),
      ]),
    ]);
    const holder = deferred();
    settle(resilience.run(() => holder.promise, { policy: 'p' }));
    const waiters = [0, 1].map(() => settle(resilience.run(() => 'served', { policy: 'p' })));
    expect(codeOf(await errorOf(resilience.run(() => 1, { policy: 'p' })))).toBe('bulkhead_full');
    await clock.advance(200); // both waiters sat 200 ms > interval: shed when the slot frees
    holder.resolve(1);
    await clock.advance(0);
    expect(waiters.map((w) => codeOf(w.error))).toEqual(['bulkhead_queue_shed', 'bulkhead_queue_shed']);
    expect(ofType('bulkhead_shed')).toHaveLength(2);
    expect(ofType('rejected').map((e) => e.code)).toEqual([
      'bulkhead_full',
      'bulkhead_queue_shed',
      'bulkhead_queue_shed',
    ]);
    expect(await snap(resilience)).toMatchObject({ inUse: 0, waiting: 0 });
  });

  it('prioritized: a CRITICAL arrival displaces a BEST_EFFORT waiter (criticality from context)', async () => {
    const { resilience, clock, ofType } = setup([
      policy('p', [new BulkheadStrategy({ maxConcurrency: 1, maxQueue: 1, prioritized: true })]),
    ]);
    const holder = deferred();
    settle(resilience.run(() => holder.promise, { policy: 'p' }));
    const low = settle(
      bindCriticality(Criticality.BEST_EFFORT, () => resilience.run(() => 'low', { policy: 'p' })),
    );
    const high = settle(
      bindCriticality(Criticality.CRITICAL, () => resilience.run(() => 'high', { policy: 'p' })),
    );
    await clock.advance(0);
    expect(codeOf(low.error)).toBe('bulkhead_queue_shed');
    expect(ofType('bulkhead_shed')[0]?.criticality).toBe(Criticality.BEST_EFFORT);
    holder.resolve(1);
    await clock.advance(0);
    expect(high.value).toBe('high');
  });

  it('a caller abort of a waiter and of a holder each frees exactly their own place', async () => {
    const { resilience, clock } = setup([
      policy('p', [new BulkheadStrategy({ maxConcurrency: 2, maxQueue: 2 })]),
    ]);
    const holders = [trackedController(), trackedController()];
    const held = holders.map((t) => settle(resilience.run(hang, { policy: 'p', signal: t.signal })));
    const waiter = trackedController();
    const w = settle(resilience.run(() => 'w', { policy: 'p', signal: waiter.signal }));
    const next = settle(resilience.run(() => 'next', { policy: 'p' }));
    await clock.advance(0);
    expect(await snap(resilience)).toMatchObject({ inUse: 2, waiting: 2 });
    waiter.ac.abort(new Error('waiter gone'));
    await clock.advance(0);
    expect(await snap(resilience)).toMatchObject({ inUse: 2, waiting: 1 });
    holders[0]!.ac.abort(new Error('holder gone'));
    await clock.advance(0);
    expect(next.value).toBe('next');
    expect(await snap(resilience)).toMatchObject({ inUse: 1, waiting: 0 });
    holders[1]!.ac.abort(new Error('holder gone'));
    await clock.advance(0);
    expect(await snap(resilience)).toMatchObject({ inUse: 0, waiting: 0 });
    expect([w, ...held].every((r) => r.error instanceof Error)).toBe(true);
  });
});

describe('adaptive bulkheads through run()', () => {
  const aimd = () =>
    setup([
      policy('p', [
        new AdaptiveBulkheadStrategy({
          latencyThreshold: 100,
          maxConcurrency: 4,
          cooldown: 0,
          backoffRatio: 0.5,
        }),
      ]),
    ]);

  const slowCall = (r: ReturnType<typeof aimd>, outcome: 'ok' | 'fail', signal?: AbortSignal) =>
    settle(
      r.resilience.run(
        async () => {
          await r.clock.sleep(500);
          if (outcome === 'fail') throw infraError();
          return 'ok';
        },
        { policy: 'p', signal },
      ),
    );

  it('AIMD shrinks on a slow success, emitting bulkhead_limit; shrinking never evicts in-flight work', async () => {
    const r = aimd();
    const runs = [0, 1, 2, 3].map(() => slowCall(r, 'ok'));
    await r.clock.advance(500);
    expect(runs.every((x) => x.value === 'ok')).toBe(true);
    expect(r.ofType('bulkhead_limit').map((e) => e.limit)[0]).toBe(2);
    expect((await snap(r.resilience)).concurrencyLimit).toBeLessThan(4);
    expect((await snap(r.resilience)).inUse).toBe(0);
  });

  it('AIMD samples slow failures but not cancelled calls', async () => {
    const cancelled = aimd();
    const t = trackedController();
    const s = slowCall(cancelled, 'ok', t.signal);
    await cancelled.clock.advance(400);
    t.ac.abort(new Error('bye'));
    await cancelled.clock.advance(1000);
    expect(s.done).toBe(true);
    expect((await snap(cancelled.resilience)).concurrencyLimit).toBe(4);

    const failed = aimd();
    slowCall(failed, 'fail');
    await failed.clock.advance(500);
    expect((await snap(failed.resilience)).concurrencyLimit).toBe(2);
  });

  it('Gradient2 is fed only successful completions', async () => {
    const { resilience, clock } = setup([
      policy('p', [new GradientBulkheadStrategy({ maxConcurrency: 50, initialLimit: 20 })]),
    ]);
    for (let i = 0; i < 30; i++) {
      const s = settle(resilience.run(() => Promise.reject(infraError()), { policy: 'p' }));
      await clock.advance(0);
      expect(s.done).toBe(true);
    }
    expect((await snap(resilience)).concurrencyLimit).toBe(20);
  });
});
