import { FakeClock, flushMicrotasks } from '@ballast/testing';
import { ResilienceError, isResilienceError } from '../errors/resilience-error';
import { InMemoryLatencyDigestStore } from '../stores/in-memory-latency-digest-store';
import { stateKey } from '../stores/ports';
import type { ResolvedBulkheadOptions } from '../strategies/types';
import { isParked, type Admission, type BulkheadHooks, type ParkedAdmission } from './admission';
import { QueuedBulkhead, createBulkheadRuntime } from './bulkhead-runtime';
import type { ControllerDeps, LimitController } from './limit-controllers';

function options(over: Partial<ResolvedBulkheadOptions> = {}): ResolvedBulkheadOptions {
  return {
    maxConcurrency: 1,
    maxQueue: 0,
    queueTarget: undefined,
    queueInterval: 100,
    queueAdaptiveLifo: false,
    prioritized: false,
    ...over,
  };
}

function fixed(over: Partial<ResolvedBulkheadOptions> = {}, hooks: BulkheadHooks = {}, route?: string) {
  const clock = new FakeClock(0);
  const runtime = createBulkheadRuntime(
    { type: 'bulkhead', options: options(over) },
    {
      clock,
      key: stateKey('orders', route),
      digest: new InMemoryLatencyDigestStore(),
      policy: 'orders',
      route,
      hooks,
    },
  );
  return { clock, runtime };
}

/** A limit the test moves by hand, as an adaptive algorithm would. */
class ManualLimit implements LimitController {
  limit: number;
  deps!: ControllerDeps;
  constructor(initial: number) {
    this.limit = initial;
  }
  sample(): void {}
  set(limit: number): void {
    this.limit = limit;
    this.deps.onAsyncChange();
  }
}

function manual(initial: number, over: Partial<ResolvedBulkheadOptions> = {}, hooks: BulkheadHooks = {}) {
  const clock = new FakeClock(0);
  const control = new ManualLimit(initial);
  const runtime = new QueuedBulkhead(
    options(over),
    {
      clock,
      key: stateKey('p', undefined),
      digest: new InMemoryLatencyDigestStore(),
      policy: 'p',
      route: undefined,
      hooks,
    },
    (deps) => {
      control.deps = deps;
      return control;
    },
  );
  return { clock, runtime, control };
}

/** Records how a parked admission settles, without awaiting it. */
interface Tracked {
  readonly parked: ParkedAdmission;
  value: Admission | undefined;
}
function park(admission: Admission | ParkedAdmission): Tracked {
  if (!isParked(admission)) throw new Error(`expected to park, got ${String(admission)}`);
  const t: Tracked = { parked: admission, value: undefined };
  void admission.result.then((v) => {
    t.value = v;
  });
  return t;
}
function codeOf(value: Admission | ParkedAdmission | undefined): string | undefined {
  return isResilienceError(value) ? value.code : undefined;
}

describe('bulkhead runtime: fast path and rejections', () => {
  it('admits synchronously with `true` while a slot is free and nobody waits', () => {
    const { runtime } = fixed({ maxConcurrency: 2 });
    expect(runtime.acquire(2, undefined)).toBe(true);
    expect(runtime.acquire(2, undefined)).toBe(true);
    expect(runtime.inUse).toBe(2);
    expect(runtime.limit).toBe(2);
    expect(isParked(true)).toBe(false);
  });

  it('rejects with an infrastructure/bulkhead_full value carrying policy and route when there is no queue', () => {
    const { runtime } = fixed({ maxConcurrency: 1, maxQueue: 0 }, {}, 'db');
    runtime.acquire(2, undefined);
    const rejected = runtime.acquire(2, undefined);
    expect(rejected).toBeInstanceOf(ResilienceError);
    expect(isParked(rejected)).toBe(false);
    const e = rejected as ResilienceError;
    expect([e.kind, e.code, e.retryable, e.policy, e.route]).toEqual([
      'infrastructure',
      'bulkhead_full',
      true,
      'orders',
      'db',
    ]);
    expect(e.message).not.toContain('orders');
  });

  it('leaves route unset when the key has no route', () => {
    const { runtime } = fixed({ maxConcurrency: 1 });
    runtime.acquire(2, undefined);
    const e = runtime.acquire(2, undefined) as ResilienceError;
    expect(e.route).toBeUndefined();
    expect(e.policy).toBe('orders');
  });

  it('rejects with bulkhead_full when the queue is full', () => {
    const { runtime } = fixed({ maxConcurrency: 1, maxQueue: 2 });
    runtime.acquire(2, undefined);
    park(runtime.acquire(2, undefined));
    park(runtime.acquire(2, undefined));
    expect(codeOf(runtime.acquire(2, undefined))).toBe('bulkhead_full');
    expect(runtime.waiting).toBe(2);
  });
});

describe('bulkhead runtime: queueing', () => {
  it('wakes parked waiters in FIFO order, one per release', async () => {
    const { runtime } = fixed({ maxConcurrency: 1, maxQueue: 3 });
    expect(runtime.acquire(2, undefined)).toBe(true);
    const [b, c, d] = [0, 1, 2].map(() => park(runtime.acquire(2, undefined))) as [Tracked, Tracked, Tracked];
    expect(runtime.waiting).toBe(3);
    runtime.release(5, 'success');
    await flushMicrotasks();
    expect([b.value, c.value, d.value]).toEqual([true, undefined, undefined]);
    runtime.release(5, 'success');
    await flushMicrotasks();
    expect([c.value, d.value]).toEqual([true, undefined]);
    runtime.release(5, 'failure');
    await flushMicrotasks();
    expect(d.value).toBe(true);
    expect([runtime.inUse, runtime.waiting]).toEqual([1, 0]);
  });

  it('never lets a newcomer overtake a waiter that was just granted a slot', async () => {
    const { runtime } = fixed({ maxConcurrency: 1, maxQueue: 2 });
    runtime.acquire(2, undefined);
    const b = park(runtime.acquire(2, undefined));
    runtime.release(5, 'success'); // b is granted now; its continuation has not run yet
    const newcomer = runtime.acquire(3, undefined);
    expect(isParked(newcomer)).toBe(true);
    await flushMicrotasks();
    expect(b.value).toBe(true);
    expect([runtime.inUse, runtime.waiting]).toEqual([1, 1]);
  });

  it('cancel() leaves the queue at once and the result never settles', async () => {
    const { runtime } = fixed({ maxConcurrency: 1, maxQueue: 3 });
    runtime.acquire(2, undefined);
    const b = park(runtime.acquire(2, undefined));
    const c = park(runtime.acquire(2, undefined));
    b.parked.cancel();
    expect(runtime.waiting).toBe(1);
    b.parked.cancel(); // idempotent
    expect(runtime.waiting).toBe(1);
    runtime.release(5, 'success');
    await flushMicrotasks();
    expect(b.value).toBeUndefined();
    expect(c.value).toBe(true);
    expect(runtime.inUse).toBe(1);
  });

  it('cancel() right after a grant the caller has not observed gives the slot back to the next waiter', async () => {
    const { runtime } = fixed({ maxConcurrency: 1, maxQueue: 3 });
    runtime.acquire(2, undefined);
    const b = park(runtime.acquire(2, undefined));
    const c = park(runtime.acquire(2, undefined));
    runtime.release(5, 'success'); // grants b …
    b.parked.cancel(); // … whose caller aborts in the same tick
    await flushMicrotasks();
    expect(c.value).toBe(true);
    expect([runtime.inUse, runtime.waiting, runtime.overReleases]).toEqual([1, 0, 0]);
  });

  it('fails a waiter whose deadline passed with timeout/deadline_exceeded at wake and hands its slot on', async () => {
    const { runtime, clock } = fixed({ maxConcurrency: 1, maxQueue: 3 }, {}, 'db');
    runtime.acquire(2, undefined);
    const b = park(runtime.acquire(2, 50));
    const c = park(runtime.acquire(2, 500));
    await clock.advance(100);
    expect(b.value).toBeUndefined(); // no timers: nothing happens until a slot frees up
    runtime.release(100, 'success');
    await flushMicrotasks();
    const e = b.value as ResilienceError;
    expect([e.kind, e.code, e.policy, e.route]).toEqual(['timeout', 'deadline_exceeded', 'orders', 'db']);
    expect(c.value).toBe(true);
    expect(runtime.inUse).toBe(1);
  });

  it('answers deadline_exceeded at once instead of parking a waiter already past its deadline', async () => {
    const { runtime, clock } = fixed({ maxConcurrency: 1, maxQueue: 3 });
    await clock.advance(10);
    runtime.acquire(2, undefined);
    expect(codeOf(runtime.acquire(2, 10))).toBe('deadline_exceeded');
    expect(runtime.waiting).toBe(0);
  });
});

describe('bulkhead runtime: limit changes', () => {
  it('shrinking never evicts in-flight work and admits nobody until inUse < limit', async () => {
    const limits: number[] = [];
    const { runtime, control } = manual(4, { maxQueue: 4 }, { onLimit: (l) => limits.push(l) });
    for (let i = 0; i < 4; i++) expect(runtime.acquire(2, undefined)).toBe(true);
    const w = park(runtime.acquire(2, undefined));
    control.set(2);
    expect([runtime.limit, runtime.inUse, runtime.waiting]).toEqual([2, 4, 1]);
    runtime.release(1, 'success');
    runtime.release(1, 'success');
    await flushMicrotasks();
    expect(w.value).toBeUndefined(); // inUse 2 = limit 2
    runtime.release(1, 'success');
    await flushMicrotasks();
    expect(w.value).toBe(true);
    expect(runtime.inUse).toBe(2);
    expect(limits).toEqual([2]);
  });

  it('growing the limit admits waiters at once, in order', async () => {
    const { runtime, control } = manual(1, { maxQueue: 4 });
    runtime.acquire(2, undefined);
    const ws = [0, 1, 2].map(() => park(runtime.acquire(2, undefined)));
    control.set(3);
    await flushMicrotasks();
    expect(ws.map((w) => w.value)).toEqual([true, true, undefined]);
    expect([runtime.inUse, runtime.waiting]).toEqual([3, 1]);
  });
});

describe('bulkhead runtime: exactly-once release', () => {
  it('ignores and counts a release with no slot held, so a double release never frees a phantom slot', () => {
    const { runtime } = fixed({ maxConcurrency: 2 });
    expect(runtime.acquire(2, undefined)).toBe(true);
    runtime.release(1, 'success');
    runtime.release(1, 'success'); // double release
    expect([runtime.inUse, runtime.overReleases]).toEqual([0, 1]);
    expect(runtime.acquire(2, undefined)).toBe(true);
    expect(runtime.acquire(2, undefined)).toBe(true);
    expect(codeOf(runtime.acquire(2, undefined))).toBe('bulkhead_full');
  });

  it('calls hooks as methods of their object', () => {
    class Recorder implements BulkheadHooks {
      readonly seen: string[] = [];
      onShed(criticality: number, sojourn: number): void {
        this.seen.push(`shed ${criticality} after ${sojourn}`);
      }
    }
    const recorder = new Recorder();
    const { runtime } = fixed({ maxConcurrency: 1, maxQueue: 1, prioritized: true }, recorder);
    runtime.acquire(2, undefined);
    park(runtime.acquire(1, undefined));
    park(runtime.acquire(2, undefined));
    expect(recorder.seen).toEqual(['shed 1 after 0']);
  });

  it('keeps its bookkeeping when a hook throws', async () => {
    const throwing: BulkheadHooks = {
      onShed: () => {
        throw new Error('listener bug');
      },
    };
    const { runtime } = fixed({ maxConcurrency: 1, maxQueue: 1, prioritized: true }, throwing);
    runtime.acquire(2, undefined);
    const low = park(runtime.acquire(0, undefined));
    const high = park(runtime.acquire(3, undefined)); // displaces `low`; the hook throws
    await flushMicrotasks();
    expect(codeOf(low.value)).toBe('bulkhead_queue_shed');
    runtime.release(1, 'success');
    await flushMicrotasks();
    expect(high.value).toBe(true);
  });
});
