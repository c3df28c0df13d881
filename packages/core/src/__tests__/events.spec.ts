import { ResilienceError } from '../errors/resilience-error';
import { FakeClock, seededRandom } from '@ballast/testing';
import { EventType, type ResilienceEvent } from '../events';
import { Resilience } from '../resilience';
import { BulkheadStrategy } from '../strategies/bulkhead-strategy';
import { RateLimitStrategy } from '../strategies/rate-limit-strategy';
import { RetryStrategy } from '../strategies/retry-strategy';
import { TimeoutStrategy } from '../strategies/timeout-strategy';
import { deferred, infraError, settle, setup } from './helpers';
import { breaker, policy } from './kit';

/** Events (SPEC §5, §11.12): typed, exactly once per rejection and per retry, nothing built without a listener. */

const counts = (events: readonly ResilienceEvent[]) => {
  const c: Record<string, number> = {};
  for (const e of events) {
    const key =
      e.type === 'rejected' ? `rejected:${e.code}` : e.type === 'call' ? `call:${e.outcome}` : e.type;
    c[key] = (c[key] ?? 0) + 1;
  }
  return c;
};

describe('events', () => {
  it('exactly one event per rejection and per retry, and one call event per run', async () => {
    const { resilience, clock, events } = setup([
      policy('p', [
        new RateLimitStrategy({ permits: 6, per: '1h' }),
        new BulkheadStrategy({ maxConcurrency: 1 }),
        breaker({ minThroughput: 2, failureRatio: 0.5 }),
        new RetryStrategy({ maxAttempts: 3, backoff: { base: 10, max: 10, jitter: 'none' } }),
        new TimeoutStrategy({ timeout: 50 }),
      ]),
    ]);
    const holder = deferred();
    const held = settle(resilience.run(() => holder.promise, { policy: 'p' })); // token 1, slot taken
    await resilience.run(() => 1, { policy: 'p' }).catch(() => 0); // token 2: bulkhead_full
    holder.resolve('ok');
    await clock.advance(0);
    expect(held.value).toBe('ok');
    const failing = settle(resilience.run(() => Promise.reject(infraError()), { policy: 'p' })); // token 3: 2 retries, trips
    await clock.advance(100);
    expect(failing.done).toBe(true);
    for (let i = 0; i < 3; i++) await resilience.run(() => 1, { policy: 'p' }).catch(() => 0); // tokens 4–6: circuit_open
    for (let i = 0; i < 2; i++) await resilience.run(() => 1, { policy: 'p' }).catch(() => 0); // rate_limited
    expect(counts(events)).toEqual({
      'call:success': 1,
      'call:failure': 1,
      'call:rejected': 6,
      'rejected:bulkhead_full': 1,
      'rejected:circuit_open': 3,
      'rejected:rate_limited': 2,
      retry: 2,
      breaker_state: 1,
    });
    expect(events.every((e) => e.policy === 'p' && 'route' in e && e.route === undefined)).toBe(true);
  });

  it('with no listener nothing is emitted; a listener added later sees only later events', async () => {
    const clock = new FakeClock();
    const resilience = new Resilience({
      policies: [policy('p', [new RateLimitStrategy({ permits: 1, per: '1h' })])],
      clock,
      random: seededRandom(3),
    });
    await resilience.run(() => 1, { policy: 'p' });
    await resilience.run(() => 1, { policy: 'p' }).catch(() => 0);
    const seen: ResilienceEvent[] = [];
    const off = resilience.on((e) => seen.push(e));
    await resilience.run(() => 1, { policy: 'p', route: 'later' });
    expect(seen.map((e) => e.type)).toEqual(['call']);
    expect(seen[0]).toMatchObject({ route: 'later', outcome: 'success' });
    off();
    off(); // idempotent
    await resilience.run(() => 1, { policy: 'p' }).catch(() => 0);
    expect(seen).toHaveLength(1);
  });

  it('a call whose policy reads no clock skips the start-time read unless a listener wants its duration', async () => {
    const clock = new FakeClock();
    let reads = 0;
    const counting = {
      now: () => {
        reads++;
        return clock.now();
      },
      setTimeout: (f: () => void, ms: number) => clock.setTimeout(f, ms),
      clearTimeout: (h: unknown) => clock.clearTimeout(h as never),
    };
    const resilience = new Resilience({
      policies: [
        policy('retry-only', [
          new RetryStrategy({ maxAttempts: 2, backoff: { base: 5, max: 5, jitter: 'none' } }),
        ]),
        policy('timed', [new TimeoutStrategy({ timeout: 50 })]),
      ],
      clock: counting,
      random: seededRandom(3),
    });
    await resilience.ready();
    const before = reads;
    await resilience.run(() => 1, { policy: 'retry-only' });
    expect(reads - before).toBe(0);
    await resilience.run(async () => 1, { policy: 'timed' });
    expect(reads).toBeGreaterThan(0);
    // With a listener the same call is timed: its `call` event carries the duration fn took.
    const seen: ResilienceEvent[] = [];
    const off = resilience.on((e) => seen.push(e));
    const slow = settle(
      resilience.run(() => new Promise((r) => clock.setTimeout(() => r(1), 30)), { policy: 'retry-only' }),
    );
    await clock.advance(30);
    expect(slow.value).toBe(1);
    expect(seen).toEqual([
      { type: 'call', policy: 'retry-only', route: undefined, outcome: 'success', duration: 30 },
    ]);
    // A call that started unheard and ends heard is not reported with a made-up duration.
    off();
    const unheard = settle(
      resilience.run(() => new Promise((r) => clock.setTimeout(() => r(2), 30)), { policy: 'retry-only' }),
    );
    const late: ResilienceEvent[] = [];
    resilience.on((e) => late.push(e));
    await clock.advance(30);
    expect(unheard.value).toBe(2);
    expect(late).toEqual([]);
  });

  it('unsubscribing one listener keeps the others; subscribe/unsubscribe inside a listener is safe', async () => {
    const { resilience } = setup([policy('p', [])]);
    const a: string[] = [];
    const b: string[] = [];
    let offB: () => void = () => undefined;
    const offA = resilience.on((e) => {
      a.push(e.type);
      offB(); // unsubscribes b during an emit
      resilience.on(() => undefined)(); // subscribes and unsubscribes during an emit
    });
    offB = resilience.on((e) => b.push(e.type));
    await resilience.run(() => 1, { policy: 'p' });
    await resilience.run(() => 1, { policy: 'p' });
    expect(a).toEqual(['call', 'call']);
    expect(b).toEqual(['call']); // it still got the event being delivered when it was removed
    offA();
  });

  it('the same function subscribed twice is two subscriptions: unsubscribing one keeps the other', async () => {
    const { resilience } = setup([policy('p', [])]);
    const seen: string[] = [];
    const listener = (e: { type: string }): void => {
      seen.push(e.type);
    };
    const off1 = resilience.on(listener);
    const off2 = resilience.on(listener);
    await resilience.run(() => 1, { policy: 'p' });
    expect(seen).toEqual(['call', 'call']);
    off1();
    off1(); // idempotent: it does not remove the other subscription
    await resilience.run(() => 1, { policy: 'p' });
    expect(seen).toEqual(['call', 'call', 'call']);
    off2();
    await resilience.run(() => 1, { policy: 'p' });
    expect(seen).toHaveLength(3);
    // An unsubscribe after dispose() touches no later subscription.
    const off3 = resilience.on(listener);
    resilience.dispose();
    const later: string[] = [];
    resilience.on((e) => later.push(e.type));
    off3();
    await resilience.run(() => 1, { policy: 'p' });
    expect(later).toEqual(['call']);
    expect(seen).toHaveLength(3);
  });

  it('a throwing listener never breaks the call; it is reported as a process warning', async () => {
    const { resilience } = setup([policy('p', [])]);
    const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      resilience.on(() => {
        throw new Error('listener bug');
      });
      await expect(resilience.run(() => 'still fine', { policy: 'p' })).resolves.toBe('still fine');
      expect(warn).toHaveBeenCalledWith(expect.stringContaining('listener bug'), 'BallastListenerWarning');
    } finally {
      warn.mockRestore();
    }
  });

  it('dispose() drops every listener', async () => {
    const { resilience, events } = setup([policy('p', [])]);
    await resilience.run(() => 1, { policy: 'p' });
    resilience.dispose();
    await resilience.run(() => 1, { policy: 'p' });
    expect(events).toHaveLength(1);
  });

  it('EventType names every event of SPEC §5 (and §14: control_applied, chaos_injected)', () => {
    expect(Object.values(EventType).sort()).toEqual(
      [
        'call',
        'rejected',
        'retry',
        'attempt_timeout',
        'breaker_state',
        'throttle_reject',
        'bulkhead_limit',
        'bulkhead_shed',
        'hedge_attempt',
        'hedge_won',
        'fallback',
        'store_degraded',
        'control_applied',
        'chaos_injected',
      ].sort(),
    );
  });

  it('call events carry the duration on the Resilience clock and the code of a failure', async () => {
    const { resilience, clock, ofType } = setup([policy('p', [new TimeoutStrategy({ timeout: 70 })])]);
    const s = settle(resilience.run(() => new Promise(() => {}), { policy: 'p', route: 'r' }));
    await clock.advance(70);
    expect(s.done).toBe(true);
    await resilience
      .run(() => Promise.reject(Object.assign(new Error(), { status: 404 })), { policy: 'p' })
      .catch(() => 0);
    // A ResilienceError the application throws with a code of its own is named by its kind: an order id as a
    // code would make one metric series per order.
    await resilience
      .run(() => Promise.reject(new ResilienceError({ kind: 'not_found', code: 'order_42_missing' })), {
        policy: 'p',
      })
      .catch(() => 0);
    expect(ofType('call')).toEqual([
      { type: 'call', policy: 'p', route: 'r', outcome: 'failure', duration: 70, code: 'attempt_timeout' },
      { type: 'call', policy: 'p', route: undefined, outcome: 'failure', duration: 0, code: 'not_found' },
      { type: 'call', policy: 'p', route: undefined, outcome: 'failure', duration: 0, code: 'not_found' },
    ]);
  });

  it('a cancelled call carries no code, whether the caller aborted before or during it', async () => {
    const { resilience, clock, ofType } = setup([policy('p', [])]);
    const before = new AbortController();
    before.abort(new Error('gone'));
    await resilience.run(() => 1, { policy: 'p', signal: before.signal }).catch(() => 0);
    const during = new AbortController();
    const s = settle(resilience.run(() => new Promise(() => {}), { policy: 'p', signal: during.signal }));
    await clock.advance(5);
    during.abort(Object.assign(new Error('gone'), { status: 404 }));
    await clock.advance(0);
    expect(s.done).toBe(true);
    expect(ofType('call')).toEqual([
      { type: 'call', policy: 'p', route: undefined, outcome: 'cancelled', duration: 0 },
      { type: 'call', policy: 'p', route: undefined, outcome: 'cancelled', duration: 5 },
    ]);
  });
});
