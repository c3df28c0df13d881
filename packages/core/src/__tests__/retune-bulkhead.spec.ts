import fc from 'fast-check';
import { InMemoryRateLimitStore } from '../stores/in-memory-rate-limit-store';
import type { RateLimitStore } from '../stores/ports';
import { BulkheadStrategy } from '../strategies/bulkhead-strategy';
import { RateLimitStrategy } from '../strategies/rate-limit-strategy';
import { deferred, settle, setup } from './helpers';
import { codeOf, errorOf, policy } from './kit';

/** `admin.retune` and bulkheads: calls running and waiting cross any number of retunes, counted exactly once. */

describe('admin.retune: bulkheads', () => {
  it('carries held slots and parked waiters to the new bulkhead: the limit holds and nobody is overtaken', async () => {
    const make = (maxConcurrency: number) =>
      policy('p', [new BulkheadStrategy({ maxConcurrency, maxQueue: 4 })]);
    const { resilience, clock } = setup([make(1)]);
    const order: string[] = [];
    let running = 0;
    let peak = 0;
    const gates = new Map<string, ReturnType<typeof deferred<string>>>();
    const call = (name: string) => {
      const d = deferred<string>();
      gates.set(name, d);
      return settle(
        resilience.run(
          async () => {
            order.push(name);
            peak = Math.max(peak, ++running);
            try {
              return await d.promise;
            } finally {
              running--;
            }
          },
          { policy: 'p' },
        ),
      );
    };
    const a = call('a');
    const b = call('b'); // parked behind a
    await clock.advance(0);
    await resilience.admin.retune(make(1));
    const c = call('c'); // a newcomer after the retune queues behind b
    await clock.advance(0);
    expect(order).toEqual(['a']);
    let [snap] = await resilience.admin.inspect({ policy: 'p' });
    expect(snap).toMatchObject({ concurrencyLimit: 1, inUse: 1, waiting: 2 });
    gates.get('a')!.resolve('a');
    await clock.advance(0);
    expect(order).toEqual(['a', 'b']);
    gates.get('b')!.resolve('b');
    await clock.advance(0);
    expect(order).toEqual(['a', 'b', 'c']);
    // A retune that raises the limit lets the queue through at once.
    const d = call('d');
    const e = call('e');
    await clock.advance(0);
    await resilience.admin.retune(make(3));
    await clock.advance(0);
    expect(order).toEqual(['a', 'b', 'c', 'd', 'e']);
    for (const g of gates.values()) g.resolve('done');
    await clock.advance(0);
    expect([a, b, c, d, e].map((s) => s.done)).toEqual([true, true, true, true, true]);
    expect(peak).toBe(3);
    [snap] = await resilience.admin.inspect({ policy: 'p' });
    expect(snap).toMatchObject({ concurrencyLimit: 3, inUse: 0, waiting: 0 });
    expect(clock.pendingTimers()).toBe(0);
  });

  it('a waiter carried over that does not fit the new, smaller queue is refused (bulkhead_full), not lost', async () => {
    const { resilience, clock } = setup([
      policy('p', [new BulkheadStrategy({ maxConcurrency: 1, maxQueue: 3 })]),
    ]);
    const hold = deferred();
    const running = settle(resilience.run(() => hold.promise, { policy: 'p' }));
    const waiters = [0, 1, 2].map((i) => settle(resilience.run(() => i, { policy: 'p' })));
    await clock.advance(0);
    await resilience.admin.retune(policy('p', [new BulkheadStrategy({ maxConcurrency: 1, maxQueue: 1 })]));
    await clock.advance(0);
    expect(waiters.map((w) => codeOf(w.error))).toEqual([undefined, 'bulkhead_full', 'bulkhead_full']);
    hold.resolve('x');
    await clock.advance(0);
    expect(running.value).toBe('x');
    expect(waiters[0]!.value).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('a retune that removes the bulkhead lets its parked waiters go at once, in arrival order', async () => {
    const { resilience, clock } = setup([
      policy('p', [new BulkheadStrategy({ maxConcurrency: 1, maxQueue: 5 })]),
    ]);
    const order: string[] = [];
    const hold = deferred();
    const running = settle(resilience.run(() => hold.promise, { policy: 'p' }));
    const b = settle(resilience.run(() => order.push('b'), { policy: 'p' }));
    const c = settle(resilience.run(() => order.push('c'), { policy: 'p' }));
    await clock.advance(0);
    expect(order).toEqual([]);
    await resilience.admin.retune(policy('p', []));
    await clock.advance(0);
    expect(order).toEqual(['b', 'c']);
    expect([b.done, c.done]).toEqual([true, true]);
    // A newcomer runs at once too, and the call admitted before the retune still finishes normally.
    await expect(resilience.run(() => 'd', { policy: 'p' })).resolves.toBe('d');
    hold.resolve('a');
    await clock.advance(0);
    expect(running.value).toBe('a');
    expect(clock.pendingTimers()).toBe(0);
  });

  it('a retune that adds a bulkhead counts the calls already running against its limit', async () => {
    const { resilience, clock } = setup([policy('p', [])]);
    const holds = [deferred(), deferred(), deferred()];
    const running = holds.map((h) => settle(resilience.run(() => h.promise, { policy: 'p' })));
    const stream = await resilience.admitStream('p'); // streams never take a slot
    await clock.advance(0);
    await resilience.admin.retune(policy('p', [new BulkheadStrategy({ maxConcurrency: 2, maxQueue: 1 })]));
    let [snap] = await resilience.admin.inspect({ policy: 'p' });
    expect(snap).toMatchObject({ concurrencyLimit: 2, inUse: 3, waiting: 0 });
    let started = false;
    const queued = settle(resilience.run(() => (started = true), { policy: 'p' }));
    const refused = await errorOf(resilience.run(() => 'x', { policy: 'p' }));
    expect(codeOf(refused)).toBe('bulkhead_full');
    holds[0]!.resolve(0);
    await clock.advance(0);
    expect(started).toBe(false); // 2 still running: the limit holds
    holds[1]!.resolve(1);
    await clock.advance(0);
    expect(started).toBe(true);
    expect(queued.done).toBe(true);
    holds[2]!.resolve(2);
    stream.settle();
    await clock.advance(0);
    expect(running.map((r) => r.value)).toEqual([0, 1, 2]);
    [snap] = await resilience.admin.inspect({ policy: 'p' });
    expect(snap).toMatchObject({ inUse: 0, waiting: 0 });
    expect(clock.pendingTimers()).toBe(0);
  });

  it('a bulkhead added after two retunes counts the calls still running from both earlier policies', async () => {
    const { resilience, clock } = setup([policy('p', [])]);
    const holds = [deferred(), deferred(), deferred()];
    const first = settle(resilience.run(() => holds[0]!.promise, { policy: 'p' }));
    await resilience.admin.retune(policy('p', [])); // no bulkhead → no bulkhead
    const second = holds.slice(1).map((h) => settle(resilience.run(() => h.promise, { policy: 'p' })));
    await clock.advance(0);
    await resilience.admin.retune(policy('p', [new BulkheadStrategy({ maxConcurrency: 2, maxQueue: 0 })]));
    let [snap] = await resilience.admin.inspect({ policy: 'p' });
    expect(snap).toMatchObject({ concurrencyLimit: 2, inUse: 3 });
    expect(codeOf(await errorOf(resilience.run(() => 'x', { policy: 'p' })))).toBe('bulkhead_full');
    holds[0]!.resolve(0); // the oldest call ends: 2 running, still full
    await clock.advance(0);
    expect(codeOf(await errorOf(resilience.run(() => 'x', { policy: 'p' })))).toBe('bulkhead_full');
    holds[1]!.resolve(1);
    await clock.advance(0);
    await expect(resilience.run(() => 'y', { policy: 'p' })).resolves.toBe('y');
    holds[2]!.resolve(2);
    await clock.advance(0);
    expect([first.value, ...second.map((s) => s.value)]).toEqual([0, 1, 2]);
    [snap] = await resilience.admin.inspect({ policy: 'p' });
    expect(snap).toMatchObject({ inUse: 0, waiting: 0 });
    expect(clock.pendingTimers()).toBe(0);
  });

  it('removing a bulkhead and adding one back still counts the calls admitted by the first', async () => {
    const { resilience, clock } = setup([
      policy('p', [new BulkheadStrategy({ maxConcurrency: 2, maxQueue: 1 })]),
    ]);
    const holds = [deferred(), deferred(), deferred()];
    const calls = holds.map((h) => settle(resilience.run(() => h.promise, { policy: 'p' })));
    await clock.advance(0); // two hold slots, one is parked
    await resilience.admin.retune(policy('p', [])); // the parked one goes at once
    await clock.advance(0);
    await resilience.admin.retune(policy('p', [new BulkheadStrategy({ maxConcurrency: 2, maxQueue: 0 })]));
    let [snap] = await resilience.admin.inspect({ policy: 'p' });
    expect(snap).toMatchObject({ concurrencyLimit: 2, inUse: 3 });
    expect(codeOf(await errorOf(resilience.run(() => 'x', { policy: 'p' })))).toBe('bulkhead_full');
    holds[0]!.resolve(0);
    holds[1]!.resolve(1);
    await clock.advance(0);
    await expect(resilience.run(() => 'y', { policy: 'p' })).resolves.toBe('y');
    holds[2]!.resolve(2);
    await clock.advance(0);
    expect(calls.map((c) => c.value)).toEqual([0, 1, 2]);
    [snap] = await resilience.admin.inspect({ policy: 'p' });
    expect(snap).toMatchObject({ inUse: 0, waiting: 0 });
  });

  it('a call that crossed four retunes gives its slot back once: no slot leaks, none is freed twice', async () => {
    const { resilience, clock } = setup([
      policy('p', [new BulkheadStrategy({ maxConcurrency: 1, maxQueue: 0 })]),
    ]);
    const hold = deferred();
    const call = settle(resilience.run(() => hold.promise, { policy: 'p' }));
    await clock.advance(0);
    const limited = (n: number) => policy('p', [new BulkheadStrategy({ maxConcurrency: n, maxQueue: 0 })]);
    for (const next of [policy('p', []), policy('p', []), limited(1), policy('p', []), limited(1)]) {
      await resilience.admin.retune(next);
      await clock.advance(0);
    }
    let [snap] = await resilience.admin.inspect({ policy: 'p' });
    expect(snap).toMatchObject({ concurrencyLimit: 1, inUse: 1 });
    expect(codeOf(await errorOf(resilience.run(() => 'x', { policy: 'p' })))).toBe('bulkhead_full');
    hold.resolve('done');
    await clock.advance(0);
    expect(call.value).toBe('done');
    [snap] = await resilience.admin.inspect({ policy: 'p' });
    expect(snap).toMatchObject({ inUse: 0 });
    // Exactly one slot came back: two newcomers at once, one runs and one is refused.
    const gate = deferred();
    const a = settle(resilience.run(() => gate.promise, { policy: 'p' }));
    expect(codeOf(await errorOf(resilience.run(() => 'x', { policy: 'p' })))).toBe('bulkhead_full');
    gate.resolve('a');
    await clock.advance(0);
    expect(a.value).toBe('a');
  });

  it('a call that reaches a removed bulkhead after the retune still counts against a bulkhead added later', async () => {
    // The rate-limit store answers when the test says: the call captured the bulkhead policy, then waits there.
    const bucket = new InMemoryRateLimitStore();
    const gate = deferred();
    const gated: RateLimitStore = {
      take: async (...a) => {
        await gate.promise;
        return bucket.take(...a);
      },
      tokens: (...a) => bucket.tokens(...a),
      reset: (...a) => bucket.reset(...a),
    };
    const limited = (rest: Parameters<typeof policy>[1]) =>
      policy('p', [new RateLimitStrategy({ permits: 100, per: '1s' }), ...rest]);
    const { resilience, clock } = setup(
      [limited([new BulkheadStrategy({ maxConcurrency: 1, maxQueue: 0 })])],
      {
        stores: { rateLimit: gated },
      },
    );
    const hold = deferred();
    const late = settle(resilience.run(() => hold.promise, { policy: 'p' }));
    await resilience.admin.retune(limited([]));
    await resilience.admin.retune(limited([new BulkheadStrategy({ maxConcurrency: 1, maxQueue: 0 })]));
    gate.resolve(undefined);
    await clock.advance(0);
    let [snap] = await resilience.admin.inspect({ policy: 'p' });
    expect(snap).toMatchObject({ inUse: 1 });
    expect(codeOf(await errorOf(resilience.run(() => 'x', { policy: 'p' })))).toBe('bulkhead_full');
    hold.resolve('late');
    await clock.advance(0);
    expect(late.value).toBe('late');
    [snap] = await resilience.admin.inspect({ policy: 'p' });
    expect(snap).toMatchObject({ inUse: 0 });
    await expect(resilience.run(() => 'y', { policy: 'p' })).resolves.toBe('y');
  });

  it('a key whose only running calls came from a removed bulkhead is not evicted: a bulkhead added later counts them', async () => {
    const bulkhead = () => policy('p', [new BulkheadStrategy({ maxConcurrency: 1, maxQueue: 0 })]);
    const { resilience, clock } = setup([bulkhead()], { maxKeysPerPolicy: 1 });
    const hold = deferred();
    const call = settle(resilience.run(() => hold.promise, { policy: 'p', route: 'a' }));
    await clock.advance(0);
    await resilience.admin.retune(policy('p', []));
    // Another route needs room; route a's new key has no call of its own, only the one the old bulkhead let in.
    await expect(resilience.run(() => 'b', { policy: 'p', route: 'b' })).resolves.toBe('b');
    await resilience.admin.retune(bulkhead());
    const snaps = await resilience.admin.inspect({ policy: 'p' });
    expect(snaps.find((s) => s.route === 'a')).toMatchObject({ inUse: 1 });
    expect(codeOf(await errorOf(resilience.run(() => 'x', { policy: 'p', route: 'a' })))).toBe(
      'bulkhead_full',
    );
    hold.resolve('a');
    await clock.advance(0);
    expect(call.value).toBe('a');
    await expect(resilience.run(() => 'y', { policy: 'p', route: 'a' })).resolves.toBe('y');
  });

  it('property: across any sequence of retunes, a bulkhead counts exactly the calls running (none lost, none twice)', async () => {
    const op = fc.oneof(
      fc.constant({ kind: 'start' as const }),
      fc.record({ kind: fc.constant('end' as const), pick: fc.nat() }),
      fc.record({ kind: fc.constant('retune' as const), bulkhead: fc.boolean() }),
    );
    await fc.assert(
      fc.asyncProperty(fc.boolean(), fc.array(op, { maxLength: 40 }), async (startWithBulkhead, ops) => {
        const make = (withBulkhead: boolean) =>
          policy('p', withBulkhead ? [new BulkheadStrategy({ maxConcurrency: 1000, maxQueue: 0 })] : []);
        const { resilience, clock } = setup([make(startWithBulkhead)]);
        let bulkhead = startWithBulkhead;
        const running: Array<{ resolve: (v: unknown) => void }> = [];
        // No snapshot until the first call: nothing runs then.
        const inUse = async () => (await resilience.admin.inspect({ policy: 'p' }))[0]?.inUse ?? 0;
        for (const o of ops) {
          if (o.kind === 'start') {
            const h = deferred();
            running.push(h);
            void resilience.run(() => h.promise, { policy: 'p' });
          } else if (o.kind === 'end' && running.length > 0) {
            running.splice(o.pick % running.length, 1)[0]!.resolve(undefined);
          } else if (o.kind === 'retune') {
            bulkhead = o.bulkhead;
            await resilience.admin.retune(make(bulkhead));
          }
          await clock.advance(0);
          if (bulkhead) expect(await inUse()).toBe(running.length);
        }
        for (const h of running.splice(0)) h.resolve(undefined);
        await clock.advance(0);
        // Nothing runs: the current bulkhead (or one added now) holds no slot.
        if (!bulkhead) await resilience.admin.retune(make(true));
        expect(await inUse()).toBe(0);
      }),
      { numRuns: 200, seed: 0x2e7 },
    );
  });
});
