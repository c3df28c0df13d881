import { FakeClock, flushMicrotasks } from '@ballast/testing';
import { ErrorCode, ResilienceError, isResilienceError } from '../errors/resilience-error';
import { stacklessError } from '../errors/stackless';
import { InMemoryLatencyDigestStore } from '../stores/in-memory-latency-digest-store';
import { stateKey } from '../stores/ports';
import { isParked, type Admission } from './admission';
import { bulkheadFull, bulkheadShed, deadlineExceeded, errorOrigin } from './bulkhead-errors';
import { createBulkheadRuntime } from './bulkhead-runtime';

/** A stack with frames has lines like "    at fn (file:1:2)" after the first line. */
const hasFrames = (e: Error): boolean => (e.stack ?? '').includes('\n    at ');

describe('bulkhead rejections are built without a stack trace', () => {
  const origin = errorOrigin('orders', 'db');

  it('keeps kind, code, message, details and origin, captures no frames, and restores Error.stackTraceLimit', () => {
    const before = Error.stackTraceLimit;
    expect(before).toBeGreaterThan(0); // otherwise this test proves nothing
    const full = bulkheadFull(origin, 4, 4, 10);
    const shed = bulkheadShed(origin, 1, 37);
    const late = deadlineExceeded(errorOrigin('orders', undefined), 100, 120);
    expect(Error.stackTraceLimit).toBe(before);
    for (const e of [full, shed, late]) {
      expect(e).toBeInstanceOf(ResilienceError);
      expect(hasFrames(e)).toBe(false);
    }
    expect(full).toMatchObject({
      kind: 'infrastructure',
      code: ErrorCode.BULKHEAD_FULL,
      message: 'Bulkhead full: every slot is busy and the queue is full',
      policy: 'orders',
      route: 'db',
      details: { limit: 4, inUse: 4, waiting: 10 },
    });
    expect(shed).toMatchObject({
      kind: 'infrastructure',
      code: ErrorCode.BULKHEAD_QUEUE_SHED,
      message: 'Shed from the bulkhead queue under overload',
      details: { criticality: 1, sojourn: 37 },
    });
    expect(late).toMatchObject({
      kind: 'timeout',
      code: ErrorCode.DEADLINE_EXCEEDED,
      message: 'Deadline exceeded while waiting for a bulkhead slot',
      policy: 'orders',
      route: undefined,
      details: { deadline: 100, now: 120 },
    });
    // A plain error built afterwards still has its frames.
    expect(hasFrames(new Error('control'))).toBe(true);
  });

  it('stacklessError restores the limit even when construction throws', () => {
    const before = Error.stackTraceLimit;
    const init = {
      kind: 'internal' as const,
      get message(): string {
        throw new Error('boom');
      },
    };
    expect(() => stacklessError(init)).toThrow('boom');
    expect(Error.stackTraceLimit).toBe(before);
  });

  it('the runtime hands out stackless bulkhead_full, bulkhead_queue_shed and deadline_exceeded values', async () => {
    const clock = new FakeClock(0);
    const runtime = createBulkheadRuntime(
      {
        type: 'bulkhead',
        options: {
          maxConcurrency: 1,
          maxQueue: 1,
          queueTarget: 10,
          queueInterval: 100,
          queueAdaptiveLifo: false,
          prioritized: false,
        },
      },
      {
        clock,
        key: stateKey('orders', undefined),
        digest: new InMemoryLatencyDigestStore(),
        policy: 'orders',
        route: undefined,
        hooks: {},
      },
    );
    expect(runtime.acquire(2, undefined)).toBe(true);
    const parked = runtime.acquire(2, undefined);
    const full = runtime.acquire(2, undefined);
    expect(isResilienceError(full) && full.code).toBe(ErrorCode.BULKHEAD_FULL);
    expect(hasFrames(full as ResilienceError)).toBe(false);
    if (!isParked(parked)) throw new Error('expected a parked waiter');
    let shed: Admission | undefined;
    void parked.result.then((v) => (shed = v));
    await clock.advance(500); // congested by now (the queue has not been found empty since t=0)
    runtime.release(1, 'success');
    await flushMicrotasks();
    expect(isResilienceError(shed) && shed.code).toBe(ErrorCode.BULKHEAD_QUEUE_SHED);
    expect(hasFrames(shed as ResilienceError)).toBe(false);
    expect(runtime.acquire(2, 0)).toBe(true); // the slot is free again: fast path
    const expired = runtime.acquire(2, 0);
    expect(isResilienceError(expired) && expired.code).toBe(ErrorCode.DEADLINE_EXCEEDED);
    expect(hasFrames(expired as ResilienceError)).toBe(false);
  });
});
