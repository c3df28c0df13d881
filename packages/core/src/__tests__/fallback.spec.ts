import { withDeadline } from '../context/deadline';
import type { CallContext } from '../resilience-types';
import { FallbackStrategy } from '../strategies/fallback-strategy';
import { HedgeStrategy } from '../strategies/hedge-strategy';
import { RateLimitStrategy } from '../strategies/rate-limit-strategy';
import { TimeoutStrategy } from '../strategies/timeout-strategy';
import { infraError, settle, setup } from './helpers';
import { breaker, hang, kindError, policy, trackedController } from './kit';

/** Fallback (SPEC §4, §11.11): wraps everything, hedge included; a per-call fallback wins over the policy's. */

describe('fallback', () => {
  it("the policy's fallback gets the final error and a context, for the kinds in `on`", async () => {
    const seen: { error: unknown; ctx: CallContext }[] = [];
    const { resilience, ofType } = setup([
      policy('p', [], {
        fallback: new FallbackStrategy({
          fallback: (error, ctx) => {
            seen.push({ error, ctx });
            return 'substitute';
          },
          on: ['infrastructure'],
        }),
      }),
    ]);
    const boom = infraError();
    await expect(resilience.run(() => Promise.reject(boom), { policy: 'p', route: 'r' })).resolves.toBe(
      'substitute',
    );
    expect(seen[0]?.error).toBe(boom);
    expect(seen[0]?.ctx).toMatchObject({ policy: 'p', route: 'r', attempt: 1 });
    expect(ofType('fallback')).toEqual([
      { type: 'fallback', policy: 'p', route: 'r', error: boom, kind: 'infrastructure' },
    ]);
    expect(ofType('call').map((e) => e.outcome)).toEqual(['success']);
    const other = kindError('validation');
    await expect(resilience.run(() => Promise.reject(other), { policy: 'p' })).rejects.toBe(other);
    expect(ofType('fallback')).toHaveLength(1);
  });

  it('a per-call fallback works on any policy, catches every kind, and wins over the policy one', async () => {
    const { resilience } = setup([
      policy('p', [], {
        fallback: new FallbackStrategy({ fallback: () => 'policy', on: ['infrastructure'] }),
      }),
    ]);
    await expect(
      resilience.run(() => Promise.reject(kindError('validation')), { policy: 'p', fallback: () => 'call' }),
    ).resolves.toBe('call');
    await expect(
      resilience.run(() => Promise.reject(infraError()), { policy: 'p', fallback: async () => 'async call' }),
    ).resolves.toBe('async call');
    const { resilience: r2, clock } = setup([]);
    const builtin = settle(
      r2.run(() => Promise.reject(infraError()), { policy: 'transient', fallback: () => 'builtin' }),
    );
    await clock.advance(60_000); // after its three attempts and backoffs
    expect(builtin.value).toBe('builtin');
  });

  it("covers Ballast's own rejections (open circuit, rate limit) and forced open", async () => {
    const { resilience } = setup([
      policy('p', [breaker({ minThroughput: 1 }), new RateLimitStrategy({ permits: 2, per: '1h' })]),
    ]);
    const fb = (e: unknown) => `fallback for ${(e as { code?: string }).code}`;
    await resilience.run(() => Promise.reject(infraError()), { policy: 'p' }).catch(() => undefined);
    const call = () => resilience.run(() => 'real', { policy: 'p', fallback: fb });
    await expect(call()).resolves.toBe('fallback for circuit_open');
    await expect(call()).resolves.toBe('fallback for rate_limited');
    await resilience.admin.forceOpen('p');
    await expect(call()).resolves.toBe('fallback for resilience_forced_open');
  });

  it('wraps the hedge: it runs once, after every hedged attempt failed', async () => {
    const { resilience, clock } = setup([
      policy('p', [], {
        hedge: new HedgeStrategy({ delay: 10, maxAttempts: 3 }),
        fallback: new FallbackStrategy({ fallback: () => 'after all hedges' }),
      }),
    ]);
    let calls = 0;
    const s = settle(
      resilience.run(
        async () => {
          calls++;
          await clock.sleep(100);
          throw infraError();
        },
        { policy: 'p' },
      ),
    );
    await clock.advance(200);
    expect(calls).toBe(3);
    expect(s.value).toBe('after all hedges');
  });

  it('is skipped when the caller aborted (the caller is gone); runs on deadline expiry', async () => {
    const { resilience, clock } = setup([
      policy('p', [], { fallback: new FallbackStrategy({ fallback: () => 'substitute' }) }),
    ]);
    const t = trackedController();
    const why = new Error('caller left');
    const s = settle(resilience.run(hang, { policy: 'p', signal: t.signal }));
    await clock.advance(0);
    t.ac.abort(why);
    await clock.advance(0);
    expect(s.error).toBe(why);
    const d = settle(withDeadline(50, () => resilience.run(hang, { policy: 'p' }), clock));
    await clock.advance(50);
    expect(d.value).toBe('substitute');
  });

  it('a fallback that throws rejects the call with its error, and the call event is still emitted', async () => {
    const { resilience, ofType } = setup([policy('p', [])]);
    const fbError = new Error('fallback failed too');
    await expect(
      resilience.run(() => Promise.reject(infraError()), {
        policy: 'p',
        fallback: () => {
          throw fbError;
        },
      }),
    ).rejects.toBe(fbError);
    expect(ofType('fallback')).toHaveLength(1);
    expect(ofType('call')).toEqual([expect.objectContaining({ outcome: 'failure' })]);
  });

  it('after an attempt timeout the fallback gets a live signal, not the timed-out attempt one', async () => {
    const { resilience, clock } = setup([policy('p', [new TimeoutStrategy({ timeout: 100 })])]);
    let fallbackSignal: AbortSignal | undefined;
    const s = settle(
      resilience.run(hang, {
        policy: 'p',
        fallback: (_e, ctx) => {
          fallbackSignal = ctx.signal;
          return 'cached';
        },
      }),
    );
    await clock.advance(100);
    expect(s.value).toBe('cached');
    expect(fallbackSignal?.aborted).toBe(false);
  });

  it('a caller abort during that fallback aborts the fallback signal', async () => {
    const { resilience, clock } = setup([policy('p', [new TimeoutStrategy({ timeout: 100 })])]);
    const t = trackedController();
    const why = new Error('caller left during the fallback');
    const s = settle(
      resilience.run(hang, {
        policy: 'p',
        signal: t.signal,
        fallback: (_e, ctx) =>
          new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason))),
      }),
    );
    await clock.advance(100);
    expect(s.done).toBe(false);
    t.ac.abort(why);
    await clock.advance(0);
    expect(s.error).toBe(why);
    expect(t.listeners()).toBe(0);
  });

  it('a caller abort during a slow fallback settles run at once with the abort reason', async () => {
    const { resilience, clock, ofType } = setup([
      policy('p', [], { fallback: new FallbackStrategy({ fallback: () => new Promise(() => {}) }) }),
    ]);
    const ac = new AbortController();
    const s = settle(resilience.run(() => Promise.reject(infraError()), { policy: 'p', signal: ac.signal }));
    await clock.advance(0);
    expect(ofType('fallback')).toHaveLength(1);
    expect(s.done).toBe(false);
    const reason = new Error('caller left');
    ac.abort(reason);
    await clock.advance(0);
    expect(s.error).toBe(reason);
    expect(ofType('call').map((e) => e.outcome)).toEqual(['cancelled']);
    expect(clock.pendingTimers()).toBe(0);
  });

  /** A call under a 100 ms deadline whose fn hangs; its per-call fallback answers 1 s later (ignoring its signal). */
  function pastDeadline(onFallback: (ctx: CallContext) => void = () => undefined) {
    const env = setup([policy('p', [])]);
    const t = trackedController();
    const s = settle(
      withDeadline(
        100,
        () =>
          env.resilience.run(hang, {
            policy: 'p',
            signal: t.signal,
            // A slow substitute (a cache on another host) that ignores its signal.
            fallback: (_error, ctx) => {
              onFallback(ctx);
              return new Promise<string>((resolve) =>
                env.clock.setTimeout(() => resolve('substitute'), 1000),
              );
            },
          }),
        env.clock,
      ),
    );
    return { ...env, t, s };
  }

  it('a caller abort during a fallback that runs past the deadline still settles run at once (as a cancellation)', async () => {
    let fallbackSignal: AbortSignal | undefined;
    const { clock, ofType, t, s } = pastDeadline((ctx) => (fallbackSignal = ctx.signal));
    await clock.advance(150);
    expect(ofType('fallback')).toHaveLength(1);
    expect(fallbackSignal?.aborted).toBe(true); // the deadline's: the fallback runs past it
    expect(s.done).toBe(false);
    const reason = new Error('client went away');
    t.ac.abort(reason);
    await clock.advance(0);
    expect(s.error).toBe(reason);
    expect(ofType('call').map((e) => e.outcome)).toEqual(['cancelled']);
    expect(t.listeners()).toBe(0);
    await clock.advance(1000); // the ignored substitute resolves later: nothing changes
    expect(s.error).toBe(reason);
    expect(ofType('call')).toHaveLength(1);
  });

  it('without a caller abort, a fallback past the deadline is awaited and its value returned', async () => {
    const { clock, ofType, t, s } = pastDeadline();
    await clock.advance(1100);
    expect(s.value).toBe('substitute');
    expect(ofType('call').map((e) => e.outcome)).toEqual(['success']);
    expect(t.listeners()).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });
});
