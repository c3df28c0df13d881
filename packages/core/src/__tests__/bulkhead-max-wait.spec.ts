import fc from 'fast-check';
import { Criticality, bindCriticality } from '../context/criticality';
import { policyFromSpec, policyToSpec } from '../policy/policy-spec';
import type { Resilience } from '../resilience';
import { AdaptiveBulkheadStrategy } from '../strategies/adaptive-bulkhead-strategy';
import { BulkheadStrategy } from '../strategies/bulkhead-strategy';
import { GradientBulkheadStrategy } from '../strategies/gradient-bulkhead-strategy';
import { deferred, settle, setup } from './helpers';
import { policy } from './kit';

/** Bulkhead `maxWait` (SPEC §14.3): a waiter parked longer fails with infrastructure / bulkhead_queue_timeout. */

const snap = async (r: Resilience) => (await r.admin.inspect({ policy: 'p' }))[0]!;

describe('bulkhead maxWait', () => {
  it('a waiter parked for maxWait fails with bulkhead_queue_timeout; fn never runs; the queue is left', async () => {
    const { resilience, clock, ofType } = setup([
      policy('p', [new BulkheadStrategy({ maxConcurrency: 1, maxQueue: 2, maxWait: '1s' })]),
    ]);
    const holder = deferred();
    const first = settle(resilience.run(() => holder.promise, { policy: 'p' }));
    let ran = false;
    const waiter = settle(resilience.run(() => (ran = true), { policy: 'p' }));
    expect(await snap(resilience)).toMatchObject({ inUse: 1, waiting: 1 });
    expect(clock.pendingTimers()).toBe(1);
    await clock.advance(999);
    expect(waiter.done).toBe(false);
    await clock.advance(1);
    expect(waiter.error).toMatchObject({
      kind: 'infrastructure',
      code: 'bulkhead_queue_timeout',
      policy: 'p',
      retryable: true,
    });
    expect(ran).toBe(false);
    expect(await snap(resilience)).toMatchObject({ inUse: 1, waiting: 0 });
    expect(ofType('rejected').map((e) => e.code)).toEqual(['bulkhead_queue_timeout']);
    expect(ofType('call').map((e) => e.outcome)).toEqual(['rejected']);
    expect(clock.pendingTimers()).toBe(0);
    holder.resolve('done');
    await clock.advance(0);
    expect(first.value).toBe('done');
    expect(await snap(resilience)).toMatchObject({ inUse: 0, waiting: 0 });
  });

  it('the timer is released when the waiter is admitted', async () => {
    const { resilience, clock } = setup([
      policy('p', [new BulkheadStrategy({ maxConcurrency: 1, maxQueue: 1, maxWait: 1000 })]),
    ]);
    const holder = deferred();
    settle(resilience.run(() => holder.promise, { policy: 'p' }));
    const second = deferred();
    const waiter = settle(resilience.run(() => second.promise, { policy: 'p' }));
    expect(clock.pendingTimers()).toBe(1);
    await clock.advance(500);
    holder.resolve(1);
    await clock.advance(0);
    expect(clock.pendingTimers()).toBe(0);
    await clock.advance(5000); // far past maxWait: the admitted call is not failed
    expect(waiter.done).toBe(false);
    second.resolve('late');
    await clock.advance(0);
    expect(waiter.value).toBe('late');
    expect(clock.pendingTimers()).toBe(0);
  });

  it('the timer is released when the caller aborts the waiter', async () => {
    const { resilience, clock } = setup([
      policy('p', [new BulkheadStrategy({ maxConcurrency: 1, maxQueue: 1, maxWait: '2s' })]),
    ]);
    const holder = deferred();
    settle(resilience.run(() => holder.promise, { policy: 'p' }));
    const ac = new AbortController();
    const waiter = settle(resilience.run(() => 'never', { policy: 'p', signal: ac.signal }));
    expect(clock.pendingTimers()).toBe(1);
    ac.abort(new Error('gone'));
    await clock.advance(0);
    expect(waiter.error).toEqual(new Error('gone'));
    expect(clock.pendingTimers()).toBe(0);
    expect(await snap(resilience)).toMatchObject({ inUse: 1, waiting: 0 });
  });

  it('a waiter shed or displaced from the queue leaves no timer', async () => {
    const { resilience, clock } = setup([
      policy('p', [
        new BulkheadStrategy({ maxConcurrency: 1, maxQueue: 1, prioritized: true, maxWait: '1s' }),
      ]),
    ]);
    settle(resilience.run(() => deferred().promise, { policy: 'p' }));
    const low = settle(resilience.run(() => 1, { policy: 'p' }));
    const high = settle(
      bindCriticality(Criticality.CRITICAL, () => resilience.run(() => 2, { policy: 'p' })),
    );
    await clock.advance(0);
    expect(low.error).toMatchObject({ code: 'bulkhead_queue_shed' });
    expect(clock.pendingTimers()).toBe(1); // the critical waiter's only
    await clock.advance(1000);
    expect(high.error).toMatchObject({ code: 'bulkhead_queue_timeout' });
    expect(clock.pendingTimers()).toBe(0);
  });

  it('a retune re-arms a carried waiter with the new bulkhead’s maxWait, counted from when it parked', async () => {
    const { resilience, clock } = setup([
      policy('p', [new BulkheadStrategy({ maxConcurrency: 1, maxQueue: 2, maxWait: '1s' })]),
    ]);
    settle(resilience.run(() => deferred().promise, { policy: 'p' }));
    const waiter = settle(resilience.run(() => 1, { policy: 'p' }));
    await clock.advance(200);
    await resilience.admin.retune(
      policy('p', [new BulkheadStrategy({ maxConcurrency: 1, maxQueue: 2, maxWait: 500 })]),
    );
    expect(clock.pendingTimers()).toBe(1);
    await clock.advance(299);
    expect(waiter.done).toBe(false);
    await clock.advance(1);
    expect(waiter.error).toMatchObject({ code: 'bulkhead_queue_timeout' });
    // retuned to a bulkhead without maxWait: a carried waiter's timer goes
    const other = settle(resilience.run(() => 2, { policy: 'p' }));
    expect(clock.pendingTimers()).toBe(1);
    await resilience.admin.retune(policy('p', [new BulkheadStrategy({ maxConcurrency: 1, maxQueue: 2 })]));
    expect(clock.pendingTimers()).toBe(0);
    expect(other.done).toBe(false);
  });

  it('property: every waiter either runs or times out at exactly maxWait, and no timer is left', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 500 }),
        fc.array(fc.integer({ min: 1, max: 400 }), { minLength: 1, maxLength: 8 }),
        async (maxWait, durations) => {
          const { resilience, clock } = setup([
            policy('p', [new BulkheadStrategy({ maxConcurrency: 1, maxQueue: 8, maxWait })]),
          ]);
          const started: number[] = [];
          const calls = durations.map((d, i) =>
            settle(
              resilience.run(
                () => {
                  started[i] = clock.now();
                  return clock.sleep(d);
                },
                { policy: 'p' },
              ),
            ),
          );
          await clock.advance(10_000);
          calls.forEach((c, i) => {
            expect(c.done).toBe(true);
            if (c.error === undefined) expect(started[i]!).toBeLessThanOrEqual(maxWait);
            else {
              expect(c.error).toMatchObject({ code: 'bulkhead_queue_timeout' });
              expect(started[i]).toBeUndefined();
            }
          });
          expect(clock.pendingTimers()).toBe(0);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('is validated with the other queue options; the JSON spec and policyToSpec carry it', () => {
    expect(() => new BulkheadStrategy({ maxConcurrency: 0, maxQueue: 2, maxWait: '-1s' })).toThrow(
      /maxConcurrency must be an integer ≥ 1, got 0; maxWait must be a duration > 0, got '-1s'/,
    );
    expect(() => new BulkheadStrategy({ maxConcurrency: 1, maxWait: 0 })).toThrow(
      /maxWait must be a duration > 0, got 0; maxWait must be set only with maxQueue ≥ 1, got 0/,
    );
    expect(() => new BulkheadStrategy({ maxConcurrency: 1, maxWait: '1s' })).toThrow(
      /maxWait must be set only with maxQueue ≥ 1, got '1s'/,
    );
    for (const s of [
      new BulkheadStrategy({ maxConcurrency: 1, maxQueue: 2, maxWait: '1.5s' }),
      new AdaptiveBulkheadStrategy({ latencyThreshold: 100, maxConcurrency: 4, maxQueue: 2, maxWait: 250 }),
      new GradientBulkheadStrategy({ maxConcurrency: 4, maxQueue: 2, maxWait: '250ms' }),
    ]) {
      const p = policy('p', [s]);
      const spec = policyToSpec(p);
      expect(spec.strategies[0]).toHaveProperty('maxWait', s.options.maxWait);
      expect(policyFromSpec(JSON.parse(JSON.stringify(spec)))).toEqual(p);
    }
    expect(new BulkheadStrategy({ maxConcurrency: 1, maxQueue: 2, maxWait: '1.5s' }).options.maxWait).toBe(
      1500,
    );
    expect(
      policyToSpec(policy('p', [new BulkheadStrategy({ maxConcurrency: 1, maxQueue: 1 })])).strategies[0],
    ).not.toHaveProperty('maxWait');
  });
});
