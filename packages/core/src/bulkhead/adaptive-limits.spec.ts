import { AimdLimit } from '@ballast/aimd';
import { Gradient2Limit } from '@ballast/gradient2';
import { FakeClock, flushMicrotasks } from '@ballast/testing';
import { InMemoryLatencyDigestStore } from '../stores/in-memory-latency-digest-store';
import { stateKey, type DigestParams, type LatencyDigestStore, type StateKey } from '../stores/ports';
import type { ResolvedAdaptiveBulkheadOptions, ResolvedGradientBulkheadOptions } from '../strategies/types';
import { isParked, type Admission, type BulkheadHooks } from './admission';
import { createBulkheadRuntime } from './bulkhead-runtime';

const QUEUE = {
  maxQueue: 8,
  queueTarget: undefined,
  queueInterval: 100,
  queueAdaptiveLifo: false,
  prioritized: false,
};
const KEY = stateKey('search', 'index');

function aimdOptions(over: Partial<ResolvedAdaptiveBulkheadOptions> = {}): ResolvedAdaptiveBulkheadOptions {
  return {
    ...QUEUE,
    latencyThreshold: 100,
    maxConcurrency: 10,
    minConcurrency: 1,
    backoffRatio: 0.5,
    increaseStep: 1,
    cooldown: 1000,
    latencyQuantile: undefined,
    window: 5,
    ...over,
  };
}

function adaptive(
  over: Partial<ResolvedAdaptiveBulkheadOptions> = {},
  digest: LatencyDigestStore = new InMemoryLatencyDigestStore(),
) {
  const clock = new FakeClock(0);
  const limits: number[] = [];
  const storeErrors: unknown[] = [];
  const hooks: BulkheadHooks = { onLimit: (l) => limits.push(l), onStoreError: (e) => storeErrors.push(e) };
  const runtime = createBulkheadRuntime(
    { type: 'adaptiveBulkhead', options: aimdOptions(over) },
    { clock, key: KEY, digest, policy: 'search', route: 'index', hooks },
  );
  return { clock, runtime, limits, storeErrors };
}

/** Parks, and records how the admission settles. */
function park(a: ReturnType<ReturnType<typeof adaptive>['runtime']['acquire']>) {
  if (!isParked(a)) throw new Error('expected to park');
  const t: { value: Admission | undefined } = { value: undefined };
  void a.result.then((v) => (t.value = v));
  return t;
}

describe('adaptive bulkhead (AIMD, threshold mode)', () => {
  it('starts at maxConcurrency and backs off on slow successes, once per cooldown', async () => {
    const { runtime, limits, clock } = adaptive();
    expect(runtime.limit).toBe(10);
    runtime.acquire(2, undefined);
    runtime.release(250, 'success'); // 10 · 0.5
    expect(runtime.limit).toBe(5);
    runtime.acquire(2, undefined);
    runtime.release(250, 'success'); // inside the 1 s cooldown: hold
    expect(runtime.limit).toBe(5);
    await clock.advance(1000);
    runtime.acquire(2, undefined);
    runtime.release(250, 'success'); // 2.5 → floor 2
    expect([runtime.limit, limits]).toEqual([2, [5, 2]]);
  });

  it('samples failures only when slower than the threshold, and never neutral outcomes', async () => {
    const { runtime, clock } = adaptive();
    runtime.acquire(2, undefined);
    runtime.release(5000, 'neutral');
    runtime.acquire(2, undefined);
    runtime.release(50, 'failure');
    expect(runtime.limit).toBe(10);
    await clock.advance(1);
    runtime.acquire(2, undefined);
    runtime.release(150, 'failure');
    expect(runtime.limit).toBe(5);
  });

  it('tracks AimdLimit exactly (floor of its float limit)', () => {
    const { runtime } = adaptive({ cooldown: 0, backoffRatio: 0.9 });
    const reference = new AimdLimit({
      maxConcurrency: 10,
      backoffRatio: 0.9,
      cooldown: 0,
      latencyThreshold: 100,
    });
    const latencies = [150, 150, 20, 20, 20, 20, 200, 30, 30, 30, 30, 30, 30, 30];
    for (const latency of latencies) {
      runtime.acquire(2, undefined);
      runtime.release(latency, 'success');
      reference.onSample(latency, 0);
      expect(runtime.limit).toBe(Math.floor(reference.limit));
    }
  });

  it('admits parked waiters when fast samples grow the limit', async () => {
    const { runtime, limits, clock } = adaptive({ maxConcurrency: 4, cooldown: 0 });
    for (let i = 0; i < 4; i++) runtime.acquire(2, undefined);
    runtime.release(500, 'success'); // 4 → 2 while 3 stay in flight
    runtime.release(500, 'success'); // 2 → 1
    expect([runtime.limit, runtime.inUse]).toEqual([1, 2]);
    const waiters = [0, 1, 2].map(() => park(runtime.acquire(2, undefined)));
    await clock.advance(10);
    runtime.release(10, 'success'); // 1 → 2: only the grown limit lets inUse 1 admit a waiter
    await flushMicrotasks();
    expect(waiters.map((w) => w.value)).toEqual([true, undefined, undefined]);
    runtime.release(10, 'success'); // 2 → 2.5 (floor 2): the freed slot goes to the next waiter
    runtime.release(10, 'success'); // 2.5 → 2.9
    await flushMicrotasks();
    expect(waiters.map((w) => w.value)).toEqual([true, true, true]);
    runtime.release(10, 'success'); // 2.9 → 3.24: limit 3
    expect(limits).toEqual([2, 1, 2, 3]);
    expect(runtime.waiting).toBe(0);
  });
});

/** A digest that answers asynchronously (like Redis) or fails on demand. */
class ScriptedDigest implements LatencyDigestStore {
  readonly inner = new InMemoryLatencyDigestStore();
  mode: 'async' | 'throw' | 'reject' = 'async';
  resetMode: 'ok' | 'throw' | 'reject' = 'ok';
  resets = 0;
  observe(key: StateKey, params: DigestParams, latency: number, now: number): Promise<number | undefined> {
    if (this.mode === 'throw') throw new Error('digest down');
    if (this.mode === 'reject') return Promise.reject(new Error('digest timeout'));
    return Promise.resolve(this.inner.observe(key, params, latency, now));
  }
  read(key: StateKey, params: DigestParams, now: number): number | undefined {
    return this.inner.read(key, params, now);
  }
  reset(key: StateKey, now: number): void | Promise<void> {
    this.resets++;
    if (this.resetMode === 'throw') throw new Error('reset down');
    if (this.resetMode === 'reject') return Promise.reject(new Error('reset timeout'));
    this.inner.reset(key, now);
  }
}

describe('adaptive bulkhead (AIMD, latencyQuantile through the LatencyDigestStore)', () => {
  it('holds while the in-memory digest warms up, backs off on the quantile, then opens a fresh epoch', () => {
    const digest = new InMemoryLatencyDigestStore();
    const reset = jest.spyOn(digest, 'reset');
    const { runtime, limits } = adaptive({ latencyQuantile: 0.5, window: 5 }, digest);
    for (let i = 0; i < 4; i++) {
      runtime.acquire(2, undefined);
      runtime.release(300, 'success');
    }
    expect(runtime.limit).toBe(10); // fewer than 5 samples: no estimate yet
    runtime.acquire(2, undefined);
    runtime.release(300, 'success');
    expect([runtime.limit, limits]).toEqual([5, [5]]);
    expect(reset).toHaveBeenCalledWith(KEY, 0);
    expect(digest.read(KEY, { quantile: 0.5, window: 5 }, 0)).toBeUndefined();
  });

  it('applies an asynchronous estimate when it arrives and admits waiters if the limit grew', async () => {
    const digest = new ScriptedDigest();
    const { runtime, limits, clock } = adaptive(
      { latencyQuantile: 0.5, window: 5, maxConcurrency: 2, cooldown: 0 },
      digest,
    );
    runtime.acquire(2, undefined);
    runtime.acquire(2, undefined);
    for (let i = 0; i < 5; i++) {
      runtime.release(300, 'success');
      runtime.acquire(2, undefined);
      await flushMicrotasks();
    }
    expect([runtime.limit, digest.resets]).toEqual([1, 1]); // 2 · 0.5 after the 5th answer
    await clock.advance(1);
    const w = park(runtime.acquire(2, undefined));
    for (let i = 0; i < 5; i++) digest.inner.observe(KEY, { quantile: 0.5, window: 5 }, 10, 0); // warm with fast samples
    runtime.release(10, 'success'); // inUse 2 → 1 = limit: no slot until the answer grows the limit
    expect(w.value).toBeUndefined();
    await flushMicrotasks();
    expect([runtime.limit, w.value, runtime.inUse]).toEqual([2, true, 2]);
    expect(limits).toEqual([1, 2]);
  });

  it.each(['throw', 'reject'] as const)('reports a digest that %ss and skips the sample', async (mode) => {
    const digest = new ScriptedDigest();
    digest.mode = mode;
    const { runtime, storeErrors } = adaptive({ latencyQuantile: 0.5 }, digest);
    runtime.acquire(2, undefined);
    runtime.release(300, 'success');
    await flushMicrotasks();
    expect(storeErrors).toHaveLength(1);
    expect([runtime.limit, runtime.inUse]).toEqual([10, 0]);
  });

  it.each(['throw', 'reject'] as const)(
    'reports a digest reset that %ss after a backoff',
    async (resetMode) => {
      const digest = new ScriptedDigest();
      digest.resetMode = resetMode;
      const { runtime, storeErrors } = adaptive({ latencyQuantile: 0.5, window: 5 }, digest);
      for (let i = 0; i < 5; i++) {
        runtime.acquire(2, undefined);
        runtime.release(300, 'success');
        await flushMicrotasks();
      }
      expect(runtime.limit).toBe(5);
      expect(storeErrors).toHaveLength(1);
    },
  );
});

/** One-sample windows: every success is its own window (the clock must move between samples). */
const PER_SAMPLE = { windowSize: 1, minWindowTime: 0, maxWindowTime: 0 } as const;

function gradient(over: Partial<ResolvedGradientBulkheadOptions> = {}) {
  const clock = new FakeClock(0);
  const limits: number[] = [];
  const options: ResolvedGradientBulkheadOptions = {
    ...QUEUE,
    maxConcurrency: 20,
    minConcurrency: 1,
    initialLimit: 20,
    rttTolerance: 1.5,
    smoothing: 0.2,
    longWindow: 600,
    headroom: 4,
    windowSize: 10,
    minWindowTime: 1000,
    maxWindowTime: 1000,
    ...over,
  };
  const runtime = createBulkheadRuntime(
    { type: 'gradientBulkhead', options },
    {
      clock,
      key: KEY,
      digest: new InMemoryLatencyDigestStore(),
      policy: 'search',
      route: 'index',
      hooks: { onLimit: (l) => limits.push(l) },
    },
  );
  const reference = new Gradient2Limit({ ...options });
  return { clock, runtime, limits, reference };
}

describe('gradient bulkhead (Gradient2)', () => {
  it('with one-sample windows it feeds every success to Gradient2, with the in-flight count at release', async () => {
    const { clock, runtime, limits, reference } = gradient(PER_SAMPLE);
    for (let i = 0; i < 20; i++) runtime.acquire(2, undefined);
    const rtts = [...Array<number>(10).fill(10), ...Array<number>(10).fill(100)];
    for (const rtt of rtts) {
      await clock.advance(1);
      const inflight = runtime.inUse; // includes the finishing call
      runtime.release(rtt, 'success');
      expect(runtime.limit).toBe(reference.onSample({ rtt, inflight }));
      runtime.acquire(2, undefined); // keep the load up (fast path while there is room)
    }
    expect(runtime.limit).toBeLessThan(20);
    expect(limits.length).toBeGreaterThan(0);
    expect(limits[limits.length - 1]).toBe(runtime.limit);
  });

  it('ignores failures and neutral outcomes, and app-limited samples', async () => {
    const { clock, runtime, limits } = gradient(PER_SAMPLE);
    for (let i = 0; i < 12; i++) {
      await clock.advance(1);
      runtime.acquire(2, undefined);
      runtime.release(1000, i % 2 === 0 ? 'failure' : 'neutral');
    }
    for (let i = 0; i < 12; i++) {
      await clock.advance(1);
      runtime.acquire(2, undefined);
      runtime.release(i < 10 ? 10 : 1000, 'success'); // inflight 1 < 20 / 2: app-limited, no change
    }
    expect([runtime.limit, limits]).toEqual([20, []]);
  });

  it('admits waiters as the limit grows', async () => {
    const { clock, runtime, limits } = gradient({ ...PER_SAMPLE, initialLimit: 2, maxConcurrency: 10 });
    runtime.acquire(2, undefined);
    runtime.acquire(2, undefined);
    const waiters = [0, 1, 2, 3].map(() => park(runtime.acquire(2, undefined)));
    for (let i = 0; i < 6; i++) {
      await clock.advance(1);
      runtime.release(10, 'success'); // steady RTT: gradient 1, est ← est + headroom·smoothing
      await flushMicrotasks();
    }
    expect(waiters.map((w) => w.value)).toEqual([true, true, true, true]);
    expect(limits[0]).toBe(3);
    expect(runtime.inUse).toBeLessThanOrEqual(runtime.limit);
  });

  it('default window (Netflix WindowedLimit): one Gradient2 sample per ≥ 1 s window of ≥ 10 successes', async () => {
    // maxConcurrency 20, 20 in flight throughout (each release is followed by a new acquire).
    const { clock, runtime, reference } = gradient();
    for (let i = 0; i < 20; i++) runtime.acquire(2, undefined);
    const done = async (at: number, rtt: number, outcome: 'success' | 'failure' = 'success') => {
      await clock.advance(at - clock.now());
      runtime.release(rtt, outcome);
      runtime.acquire(2, undefined);
    };
    // t=0: the first success closes a one-sample window (too small: discarded) and schedules the next close at
    // 0 + clamp(2 × 40, 1000, 1000) = 1000.
    await done(0, 40);
    expect(runtime.limit).toBe(20);
    // t=100…1000: 12 successes (RTT 40 ×6 then 160 ×6; average 100) and a failure (not a sample). No close yet:
    // a window closes at the first completion strictly after 1000.
    for (let i = 0; i < 12; i++) await done(100 + 75 * i, i < 6 ? 40 : 160);
    await done(1000, 5000, 'failure');
    expect(runtime.limit).toBe(20);
    // t=1001: the 13th success (RTT 100) closes the window: 13 samples ≥ 10, average RTT 100, max in flight 20.
    await done(1001, 100);
    const expected = reference.onSample({ rtt: 100, inflight: 20 });
    expect(runtime.limit).toBe(expected);
    // Next close at 1001 + 1000 = 2001. Five successes by then, closed by the sixth at 2500: 6 < 10 samples, so the
    // window is discarded and Gradient2 is not fed.
    for (let i = 0; i < 5; i++) await done(1100 + 100 * i, 10);
    await done(2500, 10);
    expect(runtime.limit).toBe(expected);
  });
});
