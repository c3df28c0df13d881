import fc from 'fast-check';
import { FakeClock, seededRandom } from '@ballast/testing';
import { Resilience } from '../resilience';
import type { ResilienceEvent } from '../events';
import { InMemoryControlStore } from '../control/in-memory-control-store';
import { policyFromSpec, policyToSpec } from '../policy/policy-spec';
import { BulkheadStrategy } from '../strategies/bulkhead-strategy';
import { FallbackStrategy } from '../strategies/fallback-strategy';
import { HedgeStrategy } from '../strategies/hedge-strategy';
import { RateLimitStrategy } from '../strategies/rate-limit-strategy';
import { RetryStrategy } from '../strategies/retry-strategy';
import { TimeoutStrategy } from '../strategies/timeout-strategy';
import type { Strategy } from '../strategies/strategy';
import type { CallContext } from '../resilience-types';
import { infraError, settle, setup } from './helpers';
import { breaker, codeOf, policy } from './kit';

/** Shadow mode (SPEC §14.3): the call runs as without the policy, and every decision is reported. */

interface Call {
  readonly at: number;
  readonly latency: number;
  readonly fails: boolean;
}

/** The guarded strategies of the equivalence runs: each decides on arrival times and outcomes alone. */
const guarded = (): Strategy[] => [
  new RateLimitStrategy({ permits: 20, per: '1s', burst: 5 }),
  new BulkheadStrategy({ maxConcurrency: 3 }),
  breaker({ minThroughput: 4, breakDuration: '2s' }),
  new TimeoutStrategy({ timeout: 100 }),
];

interface Run {
  readonly results: { ok: boolean; value: unknown; code?: string | undefined }[];
  /** The decisions, as (time, type, code) lines, without the `shadow` flag. */
  readonly decisions: string[];
  readonly shadowFlags: (true | undefined)[];
  readonly pendingTimers: number;
}

/**
 * Replays `calls` against policy `p` (built in `mode`, or without strategies for `bare`). The dependency answers
 * each call after its own latency, whatever its signal says: a slow call keeps running, as real work does.
 */
async function replay(calls: readonly Call[], mode: 'enforce' | 'shadow' | 'bare'): Promise<Run> {
  const clock = new FakeClock();
  const strategies = mode === 'bare' ? [] : guarded();
  const resilience = new Resilience({
    policies: [policy('p', strategies, mode === 'shadow' ? { mode: 'shadow' } : {})],
    clock,
    random: seededRandom(7),
  });
  const decisions: string[] = [];
  const shadowFlags: (true | undefined)[] = [];
  resilience.on((e: ResilienceEvent) => {
    if (e.type === 'rejected' || e.type === 'attempt_timeout' || e.type === 'breaker_state') {
      const detail = e.type === 'rejected' ? e.code : e.type === 'breaker_state' ? `${e.from}>${e.to}` : '';
      decisions.push(`${clock.now()} ${e.type} ${detail}`);
      if (e.type !== 'breaker_state') shadowFlags.push(e.shadow);
    }
  });
  const results: Run['results'] = [];
  calls.forEach((c, i) => {
    clock.setTimeout(() => {
      const fn = (): Promise<string> =>
        new Promise((resolve, reject) =>
          clock.setTimeout(() => (c.fails ? reject(infraError(`e${i}`)) : resolve(`v${i}`)), c.latency),
        );
      resilience.run(fn, { policy: 'p' }).then(
        (value) => (results[i] = { ok: true, value }),
        (error: unknown) =>
          (results[i] = { ok: false, value: (error as Error).message, code: codeOf(error) }),
      );
    }, c.at);
  });
  await clock.advance(calls.reduce((m, c) => Math.max(m, c.at + c.latency), 0) + 1);
  return { results, decisions, shadowFlags, pendingTimers: clock.pendingTimers() };
}

const traffic = fc.array(
  fc.record({
    at: fc.integer({ min: 0, max: 5000 }),
    latency: fc.integer({ min: 1, max: 250 }),
    fails: fc.boolean(),
  }),
  { minLength: 1, maxLength: 80 },
);

describe('shadow mode', () => {
  it('answers every call as without the policy, and reports exactly the decisions enforce mode takes', async () => {
    await fc.assert(
      fc.asyncProperty(traffic, async (calls) => {
        const [shadow, enforce, bare] = [
          await replay(calls, 'shadow'),
          await replay(calls, 'enforce'),
          await replay(calls, 'bare'),
        ];
        expect(shadow.results).toEqual(bare.results);
        expect(shadow.decisions).toEqual(enforce.decisions);
        expect(shadow.shadowFlags.every((f) => f === true)).toBe(true);
        expect(enforce.shadowFlags.every((f) => f === undefined)).toBe(true);
        expect(shadow.pendingTimers).toBe(0);
      }),
      { numRuns: 150, seed: 1405 },
    );
  });

  it('the comparison can fail: enforce mode does not answer as the bare policy on the same traffic', async () => {
    // Four calls at once: the bulkhead (3) refuses the fourth in enforce mode only.
    const calls = [0, 0, 0, 0].map((at) => ({ at, latency: 50, fails: false }));
    const [shadow, enforce, bare] = [
      await replay(calls, 'shadow'),
      await replay(calls, 'enforce'),
      await replay(calls, 'bare'),
    ];
    expect(enforce.results).not.toEqual(bare.results);
    expect(shadow.results).toEqual(bare.results);
    expect(shadow.decisions).toEqual(['0 rejected bulkhead_full']);
    expect(shadow.decisions).toEqual(enforce.decisions);
  });

  it('a timeout is reported and judged when it fires, while the call runs on with a live signal and its own result', async () => {
    const { resilience, clock, ofType } = setup([
      policy('p', [new BulkheadStrategy({ maxConcurrency: 1 }), new TimeoutStrategy({ timeout: 100 })], {
        mode: 'shadow',
      }),
    ]);
    let signal!: AbortSignal;
    const s = settle(
      resilience.run(
        (ctx: CallContext) => {
          signal = ctx.signal;
          return new Promise((resolve) => clock.setTimeout(() => resolve('slow but fine'), 300));
        },
        { policy: 'p' },
      ),
    );
    await clock.advance(150);
    expect(ofType('attempt_timeout')).toEqual([
      { type: 'attempt_timeout', policy: 'p', route: undefined, attempt: 1, timeout: 100, shadow: true },
    ]);
    expect(signal.aborted).toBe(false);
    expect(s.done).toBe(false);
    // Enforce mode would have given the slot back at the timeout: so does shadow mode.
    expect((await resilience.admin.inspect({ policy: 'p' }))[0]).toMatchObject({ inUse: 0, mode: 'shadow' });
    await clock.advance(150);
    expect(s.value).toBe('slow but fine');
    expect(ofType('call').map((e) => e.outcome)).toEqual(['success']);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('reports the retry, the fallback and the open circuit it would act on, and does none of them', async () => {
    const fallback = jest.fn(() => 'fallback value');
    const { resilience, clock, ofType } = setup([
      policy(
        'p',
        [
          breaker({ minThroughput: 2, failureRatio: 0.5 }),
          new RetryStrategy({ maxAttempts: 3, backoff: { base: 10, max: 10, jitter: 'none' } }),
        ],
        { mode: 'shadow', fallback: new FallbackStrategy({ fallback }) },
      ),
    ]);
    let attempts = 0;
    const failing = (): Promise<never> => {
      attempts++;
      return Promise.reject(infraError('down'));
    };
    for (let i = 0; i < 3; i++) {
      const s = settle(resilience.run(failing, { policy: 'p' }));
      await clock.advance(50);
      expect((s.error as Error).message).toBe('down');
    }
    expect(attempts).toBe(3); // one attempt per call: no retry, and the open circuit rejected nothing
    expect(fallback).not.toHaveBeenCalled();
    // The third call is one enforce mode refuses at the open circuit: it would make no retry decision.
    expect(ofType('retry').map((e) => [e.attempt, e.shadow])).toEqual([
      [2, true],
      [2, true],
    ]);
    expect(ofType('fallback').every((e) => e.shadow === true)).toBe(true);
    expect(ofType('fallback')).toHaveLength(3);
    expect(ofType('breaker_state').map((e) => e.to)).toEqual(['open']);
    expect(ofType('rejected')).toEqual([
      expect.objectContaining({ code: 'circuit_open', shadow: true, retryAfter: expect.any(Number) }),
    ]);
    expect(ofType('call').map((e) => e.outcome)).toEqual(['failure', 'failure', 'failure']);
  });

  it('launches no hedge', async () => {
    const { resilience, clock, ofType } = setup([
      policy('p', [], { mode: 'shadow', hedge: new HedgeStrategy({ delay: 10, maxAttempts: 3 }) }),
    ]);
    let started = 0;
    const s = settle(
      resilience.run(
        () => {
          started++;
          return new Promise((resolve) => clock.setTimeout(() => resolve('one'), 100));
        },
        { policy: 'p' },
      ),
    );
    await clock.advance(200);
    expect(s.value).toBe('one');
    expect(started).toBe(1);
    expect(ofType('hedge_attempt')).toEqual([]);
  });

  it('a call that would queue runs at once, holding its place in the queue until it ends', async () => {
    const { resilience, clock, ofType } = setup([
      policy('p', [new BulkheadStrategy({ maxConcurrency: 1, maxQueue: 1 })], { mode: 'shadow' }),
    ]);
    const started: number[] = [];
    const slow = (i: number) => () => {
      started.push(i);
      return new Promise((resolve) => clock.setTimeout(() => resolve(i), 100 * (i + 1)));
    };
    const runs = [0, 1, 2].map((i) => settle(resilience.run(slow(i), { policy: 'p' })));
    expect(started).toEqual([0, 1, 2]);
    // The first holds the slot, the second the queue's one place; the third is the one enforce mode refuses.
    expect(ofType('rejected')).toEqual([
      { type: 'rejected', policy: 'p', route: undefined, code: 'bulkhead_full', shadow: true },
    ]);
    expect((await resilience.admin.inspect({ policy: 'p' }))[0]).toMatchObject({ inUse: 1, waiting: 1 });
    await clock.advance(100); // the first ends: the second is granted the slot while it runs
    expect((await resilience.admin.inspect({ policy: 'p' }))[0]).toMatchObject({ inUse: 1, waiting: 0 });
    await clock.advance(300);
    expect(runs.map((r) => r.value)).toEqual([0, 1, 2]);
    expect((await resilience.admin.inspect({ policy: 'p' }))[0]).toMatchObject({ inUse: 0, waiting: 0 });
    expect(clock.pendingTimers()).toBe(0);
  });

  it('a call that ends while it still holds only a place in the queue gives the place up', async () => {
    const { resilience, clock } = setup([
      policy('p', [new BulkheadStrategy({ maxConcurrency: 1, maxQueue: 2 })], { mode: 'shadow' }),
    ]);
    const after = (ms: number) => () => new Promise((resolve) => clock.setTimeout(() => resolve(ms), ms));
    const long = settle(resilience.run(after(500), { policy: 'p' }));
    const short = settle(resilience.run(after(50), { policy: 'p' }));
    expect((await resilience.admin.inspect({ policy: 'p' }))[0]).toMatchObject({ inUse: 1, waiting: 1 });
    await clock.advance(50);
    expect(short.value).toBe(50);
    expect((await resilience.admin.inspect({ policy: 'p' }))[0]).toMatchObject({ inUse: 1, waiting: 0 });
    await clock.advance(450);
    expect(long.value).toBe(500);
    expect((await resilience.admin.inspect({ policy: 'p' }))[0]).toMatchObject({ inUse: 0, waiting: 0 });
    expect(clock.pendingTimers()).toBe(0);
  });

  it('a forced-open policy is reported and still called', async () => {
    const { resilience, ofType } = setup([policy('p', [breaker()], { mode: 'shadow' })]);
    await resilience.admin.forceOpen('p');
    await expect(resilience.run(() => 'through', { policy: 'p' })).resolves.toBe('through');
    expect(ofType('rejected')).toEqual([
      expect.objectContaining({ code: 'resilience_forced_open', shadow: true }),
    ]);
  });

  it('a stream opens while its circuit is forced open, and the refusal is reported', async () => {
    const { resilience, ofType } = setup([policy('p', [breaker()], { mode: 'shadow' })]);
    await resilience.admin.forceOpen('p');
    const permit = await resilience.admitStream('p');
    permit.settle();
    expect(ofType('rejected')).toEqual([
      expect.objectContaining({ code: 'resilience_forced_open', shadow: true }),
    ]);
  });
});

describe('setMode', () => {
  it('switches a policy at run time; calls started keep the mode they started in; a retune keeps the mode', async () => {
    const { resilience, clock, ofType } = setup([policy('p', [new BulkheadStrategy({ maxConcurrency: 1 })])]);
    const hold = () => new Promise((resolve) => clock.setTimeout(() => resolve('held'), 100));
    const first = settle(resilience.run(hold, { policy: 'p' }));
    await expect(resilience.run(() => 'x', { policy: 'p' })).rejects.toMatchObject({ code: 'bulkhead_full' });
    await resilience.admin.setMode('p', 'shadow', { reason: 'watch the new limit', actor: 'ops' });
    await expect(resilience.run(() => 'x', { policy: 'p' })).resolves.toBe('x');
    expect(ofType('control_applied')).toEqual([
      { type: 'control_applied', policy: 'p', route: undefined, action: 'setMode', scope: 'fleet' },
    ]);
    await resilience.admin.retune(policy('p', [new BulkheadStrategy({ maxConcurrency: 1 })]));
    expect((await resilience.admin.inspect({ policy: 'p' }))[0]?.mode).toBe('shadow');
    await resilience.admin.setMode('p', 'enforce');
    await clock.advance(100); // the first call gives its slot back
    const second = settle(resilience.run(hold, { policy: 'p' }));
    await expect(resilience.run(() => 'x', { policy: 'p' })).rejects.toMatchObject({ code: 'bulkhead_full' });
    await clock.advance(100);
    expect([first.value, second.value]).toEqual(['held', 'held']);
    const audit = await resilience.admin.audit();
    expect(audit.filter((e) => e.action === 'setMode').map((e) => e.value)).toEqual(['enforce', 'shadow']);
    expect(audit.find((e) => e.value === 'shadow')).toMatchObject({
      reason: 'watch the new limit',
      actor: 'ops',
    });
  });

  it('reaches every replica sharing the control store, and a replica that starts later', async () => {
    const store = new InMemoryControlStore();
    const clock = new FakeClock();
    const make = (id: string) =>
      new Resilience({
        policies: [policy('p', [new BulkheadStrategy({ maxConcurrency: 1, maxQueue: 0 })])],
        clock,
        stores: { control: store },
        replicaId: id,
      });
    const a = make('a');
    const b = make('b');
    await a.admin.setMode('p', 'shadow');
    const c = make('c');
    for (const r of [a, b, c]) {
      const hold = settle(
        r.run(() => new Promise((resolve) => clock.setTimeout(() => resolve(1), 10)), { policy: 'p' }),
      );
      await expect(r.run(() => 'through', { policy: 'p' })).resolves.toBe('through');
      await clock.advance(10);
      expect(hold.done).toBe(true);
    }
    for (const r of [a, b, c]) expect((await r.admin.inspect({ policy: 'p' }))[0]?.mode).toBe('shadow');
    await b.admin.setMode('p', 'enforce', { scope: 'local' });
    expect((await a.admin.inspect({ policy: 'p' }))[0]?.mode).toBe('shadow');
    expect((await b.admin.inspect({ policy: 'p' }))[0]?.mode).toBe('enforce');
    await Promise.all([a.close(), b.close(), c.close()]);
  });

  it('refuses a mode it does not know, naming the field, the constraint and the value, with the other violations', async () => {
    const { resilience } = setup([policy('p', [])]);
    await expect(
      resilience.admin.setMode('p', 'dry-run' as never, { scope: 'everywhere' as never }),
    ).rejects.toThrow(
      "options.scope must be one of 'fleet', 'local', got 'everywhere'; mode must be one of 'enforce', 'shadow', got 'dry-run'",
    );
    await expect(resilience.admin.setMode('nope', 'shadow')).rejects.toMatchObject({
      code: 'unknown_policy',
    });
  });
});

describe('mode in policies and specs', () => {
  it('is validated with the rest, defaults to enforce, and travels in the JSON spec', () => {
    expect(() => policy('p', [], { mode: 'off' as never })).toThrow(
      /mode must be one of 'enforce', 'shadow', got 'off'/,
    );
    expect(policy('p', []).mode).toBe('enforce');
    const spec = policyToSpec(policy('p', [new TimeoutStrategy({ timeout: 50 })], { mode: 'shadow' }));
    expect(spec.mode).toBe('shadow');
    expect(policyFromSpec(spec).mode).toBe('shadow');
    expect(policyToSpec(policy('p', []))).not.toHaveProperty('mode');
    expect(() => policyFromSpec({ name: 'p', strategies: [], mode: 'loud' })).toThrow(
      /mode must be one of 'enforce', 'shadow', got 'loud'/,
    );
  });
});
