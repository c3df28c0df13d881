import { AsyncLocalStorage } from 'node:async_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { systemClock } from '../time/clock';
import { Resilience } from '../resilience';
import { BulkheadStrategy } from '../strategies/bulkhead-strategy';
import { HedgeStrategy } from '../strategies/hedge-strategy';
import { RetryStrategy } from '../strategies/retry-strategy';
import { TimeoutStrategy } from '../strategies/timeout-strategy';
import { withDeadline } from '../context/deadline';
import type { CallContext } from '../resilience-types';
import { deferred, settle, setup } from './helpers';
import { breaker, codeOf, hang, policy, trackNodeTimers, trackedController } from './kit';

/**
 * Peer libraries' bugs about cancellation, timers, memory and hedging (cockatiel #69, #81, #112; failsafe #393; resilience4j #905; opossum #861; failsafe-go #65, #141), one named regression test each;
 * items 1–5, 13, 16 and 18–25 are in peer-regressions.spec.ts. Most have a fuller counterpart in the suite of their concept.
 */

describe('peer libraries’ bugs — cancellation, timers, memory', () => {
  it('6. abort-listener leaks (cockatiel #69, #81): 10k executions on one parent signal → baseline', async () => {
    const { resilience, clock } = setup([policy('p', [new TimeoutStrategy({ timeout: 100 })])]);
    const t = trackedController();
    for (let i = 0; i < 10_000; i++) await resilience.run(async () => i, { policy: 'p', signal: t.signal });
    expect(t.nodeListeners()).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('6. timer leaks (cockatiel #11): with the system clock, no timer is left once calls settle', async () => {
    const timers = trackNodeTimers();
    const resilience = new Resilience({
      policies: [
        policy(
          'p',
          [new TimeoutStrategy({ timeout: '30s' }), new BulkheadStrategy({ maxConcurrency: 100 })],
          {
            hedge: new HedgeStrategy({ delay: '10s', maxAttempts: 2 }),
          },
        ),
      ],
      clock: systemClock,
    });
    const ac = new AbortController();
    const runs = Array.from({ length: 50 }, (_, i) =>
      withDeadline('1m', () => resilience.run(async () => i, { policy: 'p', signal: ac.signal })),
    );
    try {
      await Promise.all(runs);
      resilience.dispose();
      // Deadline timers (one per call) were created and every one was cleared; the hedge delays and attempt timeouts
      // never needed a timer of their own.
      expect(timers.created()).toBeGreaterThanOrEqual(50);
      expect(timers.live()).toBe(0);
    } finally {
      timers.restore();
    }
  });

  it("6. ref'd timers keeping the process alive (cockatiel #11): system clock timers are unref'd", () => {
    const h = systemClock.setTimeout(() => undefined, 60_000) as NodeJS.Timeout;
    try {
      expect(h.hasRef()).toBe(false);
    } finally {
      systemClock.clearTimeout(h);
    }
  });

  it('6. ALS retention (@nestjs/throttler #2629): the attempt context is collectable after the call', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const { resilience, clock } = setup([policy('p', [new TimeoutStrategy({ timeout: 100 })])]);
    let ref: WeakRef<CallContext> | undefined;
    await (async () => {
      const s = settle(
        resilience.run(
          (ctx) => {
            ref = new WeakRef(ctx);
            return Promise.resolve(new Uint8Array(1 << 20));
          },
          { policy: 'p' },
        ),
      );
      await clock.advance(0);
      expect(s.done).toBe(true);
    })();
    for (let i = 0; i < 10 && ref!.deref() !== undefined; i++) {
      await new Promise((r) => setImmediate(r));
      gc();
    }
    expect(ref!.deref()).toBeUndefined();
  });

  it("6. ALS retention through the shared timer: a finished request's stores are collectable while others keep it armed", async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const turn = () => new Promise((r) => setImmediate(r));
    const requestScope = new AsyncLocalStorage<{ payload: Uint8Array }>();
    const resilience = new Resilience({
      policies: [policy('p', [new TimeoutStrategy({ timeout: '30s' })])],
      clock: systemClock,
    });
    const a = deferred();
    const b = deferred();
    let ref: WeakRef<object> | undefined;
    let runB: Promise<unknown> | undefined;
    await (async () => {
      const store = { payload: new Uint8Array(1 << 20) };
      ref = new WeakRef(store);
      // request A comes first: its attempt's timeout entry makes the queue arm its Node timer
      const runA = requestScope.run(store, () => resilience.run(() => a.promise, { policy: 'p' }));
      runB = requestScope.run({ payload: new Uint8Array(1) }, () =>
        resilience.run(() => b.promise, { policy: 'p' }),
      );
      await turn(); // the check phase: the queue arms its clock timer for the pending entries
      a.resolve('done');
      await runA;
    })();
    // B is still in flight, so the queue stays armed; A's stores must not be held by that timer
    for (let i = 0; i < 10 && ref!.deref() !== undefined; i++) {
      await turn();
      gc();
    }
    const retained = ref!.deref() !== undefined;
    b.resolve('done');
    await runB;
    resilience.dispose();
    expect(retained).toBe(false);
  });

  it('6. a timed-out attempt is retried in its own request context, not in the one that armed the timer', async () => {
    const requestScope = new AsyncLocalStorage<string>();
    const { resilience, clock } = setup([
      policy('p', [
        new RetryStrategy({ maxAttempts: 2, backoff: { base: 1, max: 1, jitter: 'none' } }),
        new TimeoutStrategy({ timeout: 100 }),
      ]),
    ]);
    const seen: string[] = [];
    const call = (id: string) =>
      requestScope.run(id, () =>
        resilience.run(
          (ctx) => {
            seen.push(`${id}#${ctx.attempt} in ${requestScope.getStore() ?? 'no request'}`);
            return ctx.attempt === 1 ? hang() : 'ok';
          },
          { policy: 'p' },
        ),
      );
    const runs = [settle(call('first')), settle(call('second'))];
    await clock.advance(100); // both attempt timeouts fire from the one shared timer
    await clock.advance(1); // the backoff
    expect(runs.map((r) => r.value)).toEqual(['ok', 'ok']);
    expect(seen.sort()).toEqual([
      'first#1 in first',
      'first#2 in first',
      'second#1 in second',
      'second#2 in second',
    ]);
  });

  it('7. unbounded per-key memory (@nestjs/throttler #2665): timers stay O(1) as keys grow', async () => {
    const { resilience, clock } = setup([policy('p', [new TimeoutStrategy({ timeout: 100 })])], {
      maxKeysPerPolicy: 100,
    });
    const runs = Array.from({ length: 5000 }, (_, i) =>
      settle(resilience.run(hang, { policy: 'p', route: `k${i}` })),
    );
    await clock.advance(0); // the queue arms its one timer a few promise hops after the burst
    expect(clock.pendingTimers()).toBe(1);
    await clock.advance(100);
    expect(runs.every((r) => r.done)).toBe(true);
    // they were all busy when created, so the map grew; the next new key brings it back under the bound
    await resilience.run(() => 'one more', { policy: 'p', route: 'next' });
    expect((await resilience.admin.inspect({ policy: 'p' })).length).toBeLessThanOrEqual(100);
  });

  it('8. bulkhead permit leaks (failsafe #393, cockatiel #112): timed-out and aborted waiters eat no permit', async () => {
    const { resilience, clock } = setup([
      policy('p', [new BulkheadStrategy({ maxConcurrency: 1, maxQueue: 10 })]),
    ]);
    const holder = deferred();
    settle(resilience.run(() => holder.promise, { policy: 'p' }));
    const expiring = [0, 1, 2].map(() =>
      settle(withDeadline(50, () => resilience.run(() => 'x', { policy: 'p' }), clock)),
    );
    const aborters = [0, 1, 2].map(() => trackedController());
    const aborted = aborters.map((t) => settle(resilience.run(() => 'y', { policy: 'p', signal: t.signal })));
    const live = settle(resilience.run(() => 'live', { policy: 'p' }));
    await clock.advance(50);
    aborters.forEach((t) => t.ac.abort(new Error('gone')));
    await clock.advance(0);
    expect([...expiring, ...aborted].every((r) => r.done)).toBe(true);
    expect((await resilience.admin.inspect({ policy: 'p' }))[0]).toMatchObject({ inUse: 1, waiting: 1 });
    holder.resolve(1);
    await clock.advance(0);
    expect(live.value).toBe('live');
    expect((await resilience.admin.inspect({ policy: 'p' }))[0]).toMatchObject({ inUse: 0, waiting: 0 });
  });

  it('9. a timeout stops the work (resilience4j #905): signal aborted with our timeout error, late results swallowed', async () => {
    const { resilience, clock } = setup([
      policy('p', [new TimeoutStrategy({ timeout: 10 }), breaker({ minThroughput: 9 })]),
    ]);
    const late = deferred();
    let signal: AbortSignal | undefined;
    const s = settle(resilience.run((ctx) => ((signal = ctx.signal), late.promise), { policy: 'p' }));
    await clock.advance(10);
    expect(codeOf(signal!.reason)).toBe('attempt_timeout');
    expect(s.error).toBe(signal!.reason);
    late.reject(new Error('late'));
    await clock.advance(0);
    expect((await resilience.admin.inspect({ policy: 'p' }))[0]?.breaker?.calls).toBe(1);
  });

  it('10. an aborted controller is never reused (opossum #861)', async () => {
    const { resilience, clock } = setup([policy('p', [new TimeoutStrategy({ timeout: 10 })])]);
    const signals: AbortSignal[] = [];
    settle(resilience.run((ctx) => (signals.push(ctx.signal), hang()), { policy: 'p' }));
    await clock.advance(10);
    await resilience.run((ctx) => signals.push(ctx.signal), { policy: 'p' });
    expect(signals.map((x) => x.aborted)).toEqual([true, false]);
  });

  it('11. cancellation identity (Polly #3086, cockatiel #101): the caller reason itself, our timeout, a distinct hedge reason', async () => {
    const { resilience, clock } = setup([
      policy('p', [new TimeoutStrategy({ timeout: 1000 })], {
        hedge: new HedgeStrategy({ delay: 10, maxAttempts: 2 }),
      }),
    ]);
    const t = trackedController();
    const reason = { why: 'a plain object reason' };
    const signals: AbortSignal[] = [];
    const s = settle(
      resilience.run((ctx) => (signals.push(ctx.signal), hang()), { policy: 'p', signal: t.signal }),
    );
    await clock.advance(10);
    t.ac.abort(reason);
    await clock.advance(0);
    expect(s.error).toBe(reason);
    expect(signals.map((x) => x.reason)).toEqual([reason, reason]);
    const w = deferred<string>();
    const losers: AbortSignal[] = [];
    const s2 = settle(
      resilience.run(
        (ctx) => (ctx.attempt && losers.length === 0 ? (losers.push(ctx.signal), hang()) : w.promise),
        { policy: 'p' },
      ),
    );
    await clock.advance(10);
    w.resolve('won');
    await clock.advance(0);
    expect(s2.value).toBe('won');
    expect(codeOf(losers[0]!.reason)).toBe('hedge_lost');
  });
});

describe('peer libraries’ bugs — hedging', () => {
  const hedged = () =>
    setup([
      policy('p', [new TimeoutStrategy({ timeout: 150 })], {
        hedge: new HedgeStrategy({ delay: 100, maxAttempts: 2, budget: { ratio: 0.5 } }),
      }),
    ]);

  async function race(r: ReturnType<typeof hedged>) {
    const list: { ctx: CallContext; d: ReturnType<typeof deferred<string>> }[] = [];
    const s = settle(
      r.resilience.run(
        (ctx) => {
          const d = deferred<string>();
          list.push({ ctx, d });
          return d.promise;
        },
        { policy: 'p' },
      ),
    );
    return { list, s };
  }

  it('losers are cancelled (Finagle #962) and children are cancelled after completion (failsafe-go #134)', async () => {
    const r = hedged();
    const { list, s } = await race(r);
    await r.clock.advance(100);
    list[1]!.d.resolve('hedge');
    await r.clock.advance(0);
    expect(s.value).toBe('hedge');
    expect(list[0]!.ctx.signal.aborted).toBe(true);
    expect(r.clock.pendingTimers()).toBe(0);
  });

  it("the winner's signal is not cancelled with the losers (failsafe-go #65)", async () => {
    const r = hedged();
    const { list } = await race(r);
    await r.clock.advance(100);
    list[1]!.d.resolve('hedge');
    await r.clock.runAll();
    expect(list[1]!.ctx.signal.aborted).toBe(false);
  });

  it('an inner timeout does not cancel the hedging (Polly PR #1340)', async () => {
    const r = hedged();
    const { list, s } = await race(r);
    await r.clock.advance(150); // the primary's own timeout
    expect(s.done).toBe(false);
    list[1]!.d.resolve('hedge');
    await r.clock.advance(0);
    expect(s.value).toBe('hedge');
  });

  it('an exhausted budget does not kill in-flight attempts (failsafe-go #141)', async () => {
    const r = hedged();
    const first = await race(r);
    await r.clock.advance(100);
    first.list[1]!.d.resolve('spent the token');
    await r.clock.advance(0);
    const second = await race(r);
    await r.clock.advance(120);
    expect(second.list).toHaveLength(1);
    expect(second.list[0]!.ctx.signal.aborted).toBe(false);
    second.list[0]!.d.resolve('primary');
    await r.clock.advance(0);
    expect(second.s.value).toBe('primary');
  });
});
