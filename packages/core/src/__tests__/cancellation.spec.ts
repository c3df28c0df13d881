import { BulkheadStrategy } from '../strategies/bulkhead-strategy';
import { HedgeStrategy } from '../strategies/hedge-strategy';
import { RateLimitStrategy } from '../strategies/rate-limit-strategy';
import { RetryStrategy } from '../strategies/retry-strategy';
import { TimeoutStrategy } from '../strategies/timeout-strategy';
import { keepSignalWatched } from '../executor/signal-watch';
import { deferred, infraError, settle, setup } from './helpers';
import { breaker, hang, policy, trackedController } from './kit';

/**
 * Cancellation by the caller's signal at every stage (SPEC §2, §11.14): `run` rejects at once with
 * `signal.reason`, releases every slot exactly once, leaves no timer and no abort listener on the caller's signal.
 */

const reason = () => new Error('caller gave up');

async function snapshot(r: ReturnType<typeof setup>['resilience'], p = 'p') {
  const [snap] = await r.admin.inspect({ policy: p });
  return snap!;
}

describe('cancellation by the caller', () => {
  it('an already-aborted signal rejects with its reason before fn runs, attaching no listener', async () => {
    const { resilience, clock, ofType } = setup([policy('p', [new TimeoutStrategy({ timeout: 100 })])]);
    const t = trackedController();
    const why = reason();
    t.ac.abort(why);
    let ran = false;
    await expect(resilience.run(() => (ran = true), { policy: 'p', signal: t.signal })).rejects.toBe(why);
    expect(ran).toBe(false);
    expect(t.adds()).toBe(0);
    expect(ofType('call').map((e) => e.outcome)).toEqual(['cancelled']);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('rate limit never waits: the caller abort interrupts the attempt, the token stays spent', async () => {
    const { resilience, clock } = setup([
      policy('p', [new RateLimitStrategy({ permits: 2, per: '1s' }), new TimeoutStrategy({ timeout: 1000 })]),
    ]);
    const t = trackedController();
    const s = settle(resilience.run(hang, { policy: 'p', signal: t.signal }));
    await clock.advance(10);
    const why = reason();
    t.ac.abort(why);
    await clock.advance(0);
    expect(s.error).toBe(why);
    expect((await snapshot(resilience)).rateLimitTokens).toBeCloseTo(1, 1);
    expect(clock.pendingTimers()).toBe(0);
    expect(t.listeners()).toBe(0);
  });

  it('parked in the bulkhead queue: leaves the queue at once, fn never runs, the holder keeps its slot', async () => {
    const { resilience, clock, ofType } = setup([
      policy('p', [new BulkheadStrategy({ maxConcurrency: 1, maxQueue: 3 })]),
    ]);
    const holder = deferred<string>();
    const h = settle(resilience.run(() => holder.promise, { policy: 'p' }));
    const t = trackedController();
    let ran = false;
    const s = settle(resilience.run(() => (ran = true), { policy: 'p', signal: t.signal }));
    await clock.advance(0);
    expect(await snapshot(resilience)).toMatchObject({ inUse: 1, waiting: 1 });
    expect(t.listeners()).toBe(1);
    const why = reason();
    t.ac.abort(why);
    await clock.advance(0);
    expect(s.error).toBe(why);
    expect(ran).toBe(false);
    expect(await snapshot(resilience)).toMatchObject({ inUse: 1, waiting: 0 });
    holder.resolve('done');
    await clock.advance(0);
    expect(h.value).toBe('done');
    expect(await snapshot(resilience)).toMatchObject({ inUse: 0, waiting: 0 });
    expect(ofType('rejected')).toHaveLength(0);
    expect(ofType('call').map((e) => e.outcome)).toEqual(['cancelled', 'success']);
    expect(t.nodeListeners()).toBe(0);
  });

  it('during the backoff sleep: rejects at once, no further attempt, the sleep timer is cleared', async () => {
    const { resilience, clock } = setup([
      policy('p', [
        breaker({ minThroughput: 100 }),
        new BulkheadStrategy({ maxConcurrency: 1 }),
        new RetryStrategy({ maxAttempts: 5, backoff: { base: 1000, max: 1000, jitter: 'none' } }),
      ]),
    ]);
    const t = trackedController();
    let calls = 0;
    const s = settle(
      resilience.run(
        () => {
          calls++;
          return Promise.reject(infraError());
        },
        { policy: 'p', signal: t.signal },
      ),
    );
    await clock.advance(500);
    expect(clock.pendingTimers()).toBe(1);
    const why = reason();
    t.ac.abort(why);
    await clock.advance(0);
    expect(s.error).toBe(why);
    expect(calls).toBe(1);
    expect(clock.pendingTimers()).toBe(0);
    expect(t.listeners()).toBe(0);
    // the cancelled call released its bulkhead slot and recorded nothing in the breaker
    expect(await snapshot(resilience)).toMatchObject({ inUse: 0, breaker: { calls: 0 } });
    await clock.advance(5000);
    expect(calls).toBe(1);
  });

  it('during an attempt whose fn ignores its signal: settles at once, aborts ctx.signal with the reason', async () => {
    const { resilience, clock } = setup([
      policy('p', [new TimeoutStrategy({ timeout: 1000 }), new BulkheadStrategy({ maxConcurrency: 2 })]),
    ]);
    const t = trackedController();
    let signal: AbortSignal | undefined;
    const s = settle(
      resilience.run(
        (ctx) => {
          signal = ctx.signal;
          return hang();
        },
        { policy: 'p', signal: t.signal },
      ),
    );
    await clock.advance(10);
    expect(clock.pendingTimers()).toBe(1); // the shared attempt-timeout queue
    const why = reason();
    t.ac.abort(why);
    await clock.advance(0);
    expect(s.error).toBe(why);
    expect(signal!.aborted).toBe(true);
    expect(signal!.reason).toBe(why);
    expect(clock.pendingTimers()).toBe(0);
    expect((await snapshot(resilience)).inUse).toBe(0);
    expect(t.listeners()).toBe(0);
    expect(t.nodeListeners()).toBe(0);
  });

  it('during a hedge wait: rejects at once and never launches the hedge', async () => {
    const { resilience, clock, ofType } = setup([
      policy('p', [], { hedge: new HedgeStrategy({ delay: 100, maxAttempts: 3 }) }),
    ]);
    const t = trackedController();
    let calls = 0;
    const s = settle(
      resilience.run(
        () => {
          calls++;
          return hang();
        },
        { policy: 'p', signal: t.signal },
      ),
    );
    await clock.advance(50);
    const why = reason();
    t.ac.abort(why);
    await clock.advance(0);
    expect(s.error).toBe(why);
    expect(clock.pendingTimers()).toBe(0);
    await clock.advance(1000);
    expect(calls).toBe(1);
    expect(ofType('hedge_attempt')).toHaveLength(0);
    expect(t.listeners()).toBe(0);
  });

  it('with hedges in flight: every attempt is aborted with the caller reason and every slot released', async () => {
    const { resilience, clock } = setup([
      policy('p', [new BulkheadStrategy({ maxConcurrency: 5 })], {
        hedge: new HedgeStrategy({ delay: 100, maxAttempts: 3 }),
      }),
    ]);
    const t = trackedController();
    const signals: AbortSignal[] = [];
    const s = settle(
      resilience.run(
        (ctx) => {
          signals.push(ctx.signal);
          return hang();
        },
        { policy: 'p', signal: t.signal },
      ),
    );
    await clock.advance(200);
    expect(signals).toHaveLength(3);
    expect((await snapshot(resilience)).inUse).toBe(3);
    const why = reason();
    t.ac.abort(why);
    await clock.advance(0);
    expect(s.error).toBe(why);
    expect(signals.map((x) => x.reason)).toEqual([why, why, why]);
    expect((await snapshot(resilience)).inUse).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('a half-open probe cancelled by its caller gives its lease back (the next call probes)', async () => {
    const { resilience, clock } = setup([policy('p', [breaker({ minThroughput: 1 })])]);
    await resilience.run(() => Promise.reject(infraError()), { policy: 'p' }).catch(() => undefined);
    await clock.advance(5000);
    const t = trackedController();
    const probe = settle(resilience.run(hang, { policy: 'p', signal: t.signal }));
    await clock.advance(0);
    await expect(resilience.run(() => 1, { policy: 'p' })).rejects.toMatchObject({ code: 'circuit_open' });
    t.ac.abort(reason());
    await clock.advance(0);
    expect(probe.done).toBe(true);
    await expect(resilience.run(() => 'probe 2', { policy: 'p' })).resolves.toBe('probe 2');
    expect((await snapshot(resilience)).breaker?.state).toBe('closed');
  });
});

describe('cancellation at every microtask boundary', () => {
  // Aborting k microtasks after an event lands the abort in every gap of the pipeline's async steps — including
  // the gaps where no wait is registered (between a bulkhead grant and the attempt, between a backoff timer and
  // the next attempt). Each must still settle at once and leak nothing.
  const GAPS = 16;

  it.each(Array.from({ length: GAPS }, (_, k) => k))(
    'abort %i microtasks after the bulkhead hands the slot over',
    async (k) => {
      const { resilience, clock } = setup([
        policy('p', [new BulkheadStrategy({ maxConcurrency: 1, maxQueue: 2 }), breaker()]),
      ]);
      const holder = deferred();
      const h = settle(resilience.run(() => holder.promise, { policy: 'p' }));
      const t = trackedController();
      let signal: AbortSignal | undefined;
      const s = settle(
        resilience.run(
          (ctx) => {
            signal = ctx.signal;
            return hang();
          },
          { policy: 'p', signal: t.signal },
        ),
      );
      await clock.advance(0);
      holder.resolve(1);
      for (let i = 0; i < k; i++) await Promise.resolve();
      const why = reason();
      t.ac.abort(why);
      await clock.advance(0);
      expect(h.done).toBe(true);
      expect(s.error).toBe(why);
      if (signal !== undefined) expect(signal.aborted).toBe(true);
      expect(await snapshot(resilience)).toMatchObject({ inUse: 0, waiting: 0 });
      expect(t.listeners()).toBe(0);
      expect(clock.pendingTimers()).toBe(0);
    },
  );

  it.each(Array.from({ length: GAPS }, (_, k) => k))(
    'abort %i microtasks after the backoff timer fires',
    async (k) => {
      const { resilience, clock } = setup([
        policy('p', [
          new RetryStrategy({ maxAttempts: 3, backoff: { base: 100, max: 100, jitter: 'none' } }),
        ]),
      ]);
      const t = trackedController();
      let calls = 0;
      let last: AbortSignal | undefined;
      const s = settle(
        resilience.run(
          (ctx) => {
            calls++;
            last = ctx.signal;
            return calls === 1 ? Promise.reject(infraError()) : hang();
          },
          { policy: 'p', signal: t.signal },
        ),
      );
      await clock.advance(99);
      // fire the backoff timer and abort k microtasks later (advance would flush everything in between)
      const fired = clock.advance(1);
      for (let i = 0; i < k; i++) await Promise.resolve();
      const why = reason();
      t.ac.abort(why);
      await fired;
      await clock.advance(0);
      expect(s.error).toBe(why);
      expect(last!.aborted).toBe(true);
      expect(clock.pendingTimers()).toBe(0);
      expect(t.listeners()).toBe(0);
    },
  );

  it('an abort raised by a listener of the retry event stops the call before the backoff', async () => {
    const { resilience, clock } = setup([
      policy('p', [
        new RetryStrategy({ maxAttempts: 3, backoff: { base: 1000, max: 1000, jitter: 'none' } }),
      ]),
    ]);
    const t = trackedController();
    const why = reason();
    resilience.on((e) => {
      if (e.type === 'retry') t.ac.abort(why);
    });
    let calls = 0;
    const s = settle(
      resilience.run(
        () => {
          calls++;
          return calls === 1 ? Promise.reject(infraError()) : hang();
        },
        { policy: 'p', signal: t.signal },
      ),
    );
    await clock.advance(0);
    expect(s.error).toBe(why);
    expect(calls).toBe(1);
    expect(clock.pendingTimers()).toBe(0);
  });
});

describe('listener hygiene', () => {
  it('keepSignalWatched: one listener for the signal’s life across sequential calls; it still cancels, and goes on abort', async () => {
    const { resilience, clock } = setup([policy('p', [new TimeoutStrategy({ timeout: 1000 })])]);
    const t = trackedController();
    keepSignalWatched(t.signal);
    for (let i = 0; i < 100; i++)
      await resilience.run(() => Promise.resolve(i), { policy: 'p', signal: t.signal });
    expect(t.adds()).toBe(1); // not one per call
    expect(t.nodeListeners()).toBe(1);
    const running = settle(resilience.run(hang, { policy: 'p', signal: t.signal }));
    const reason = new Error('connection closed');
    t.ac.abort(reason);
    await clock.advance(0);
    expect(running.error).toBe(reason);
    expect(t.nodeListeners()).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('keepSignalWatched on an aborted signal is a no-op (calls are refused with its reason)', async () => {
    const { resilience } = setup([policy('p', [])]);
    const t = trackedController();
    const reason = new Error('gone');
    t.ac.abort(reason);
    keepSignalWatched(t.signal);
    expect(t.adds()).toBe(0);
    await expect(resilience.run(() => 1, { policy: 'p', signal: t.signal })).rejects.toBe(reason);
  });

  it('a long-lived parent signal + 10k executions: the listener count returns to its baseline', async () => {
    const { resilience, clock } = setup([
      policy('p', [new TimeoutStrategy({ timeout: 1000 }), new BulkheadStrategy({ maxConcurrency: 100 })]),
    ]);
    const t = trackedController();
    t.signal.addEventListener('abort', () => undefined); // the application's own listener: the baseline
    const baseline = t.listeners();
    const ps: Promise<unknown>[] = [];
    for (let i = 0; i < 10_000; i++) {
      const mode = i % 4;
      ps.push(
        resilience
          .run(
            mode === 0
              ? () => i
              : mode === 1
                ? () => Promise.resolve(i)
                : mode === 2
                  ? () => Promise.reject(infraError())
                  : () => {
                      throw new Error('sync');
                    },
            { policy: 'p', signal: t.signal },
          )
          .catch(() => undefined),
      );
      if (i % 100 === 99) await Promise.all(ps.splice(0));
    }
    await Promise.all(ps);
    expect(t.adds()).toBeGreaterThan(1);
    expect(t.listeners()).toBe(baseline);
    expect(t.nodeListeners()).toBe(baseline);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('100 concurrent calls on one caller signal attach one listener (no MaxListenersExceededWarning); its abort cancels all', async () => {
    const { resilience, clock } = setup([policy('p', [new TimeoutStrategy({ timeout: 1000 })])]);
    const t = trackedController();
    const signals: AbortSignal[] = [];
    const runs = Array.from({ length: 100 }, () =>
      settle(
        resilience.run(
          (ctx) => {
            signals.push(ctx.signal);
            return hang();
          },
          { policy: 'p', signal: t.signal },
        ),
      ),
    );
    await clock.advance(0);
    expect(t.listeners()).toBe(1);
    expect(t.nodeListeners()).toBe(1);
    const why = reason();
    t.ac.abort(why);
    await clock.advance(0);
    expect(runs.every((r) => r.error === why)).toBe(true);
    expect(signals.every((x) => x.reason === why)).toBe(true);
    expect(clock.pendingTimers()).toBe(0);
  });
});
