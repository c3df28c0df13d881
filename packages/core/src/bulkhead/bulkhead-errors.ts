import { ErrorCode, type ResilienceError } from '../errors/resilience-error';
import { stacklessError } from '../errors/stackless';

/**
 * The three rejections a bulkhead raises (SPEC §4, §5). Messages are generic on purpose: they may reach HTTP
 * bodies, which must never carry policy names or routes (SPEC §9); those travel in `policy` / `route`.
 *
 * Built without a stack trace ({@link stacklessError}, like the executor's `rejection()`): under overload these
 * are the common path, and a captured stack (9–28 µs each, measured by the simulator) would cost more than the
 * refusal itself while only ever pointing into Ballast.
 */

/** `policy` always, `route` only when defined (exactOptionalPropertyTypes forbids an explicit undefined). */
export interface ErrorOrigin {
  readonly policy: string;
  readonly route?: string;
}

export function errorOrigin(policy: string, route: string | undefined): ErrorOrigin {
  return route === undefined ? { policy } : { policy, route };
}

/** Every slot is busy and the queue is full (or there is no queue). */
export function bulkheadFull(
  origin: ErrorOrigin,
  limit: number,
  inUse: number,
  waiting: number,
): ResilienceError {
  return stacklessError({
    ...origin,
    kind: 'infrastructure',
    code: ErrorCode.BULKHEAD_FULL,
    message: 'Bulkhead full: every slot is busy and the queue is full',
    details: { limit, inUse, waiting },
  });
}

/** Shed by CoDel at dequeue, or displaced from a full queue by a higher-criticality arrival. */
export function bulkheadShed(origin: ErrorOrigin, criticality: number, sojourn: number): ResilienceError {
  return stacklessError({
    ...origin,
    kind: 'infrastructure',
    code: ErrorCode.BULKHEAD_QUEUE_SHED,
    message: 'Shed from the bulkhead queue under overload',
    details: { criticality, sojourn },
  });
}

/** Parked longer than the bulkhead's `maxWait` (SPEC §14.3). */
export function bulkheadQueueTimeout(origin: ErrorOrigin, maxWait: number, sojourn: number): ResilienceError {
  return stacklessError({
    ...origin,
    kind: 'infrastructure',
    code: ErrorCode.BULKHEAD_QUEUE_TIMEOUT,
    message: 'Waited longer than the bulkhead allows for a slot',
    details: { maxWait, sojourn },
  });
}

/** The waiter's absolute deadline had passed when a slot came free for it (or when it tried to park). */
export function deadlineExceeded(origin: ErrorOrigin, deadline: number, now: number): ResilienceError {
  return stacklessError({
    ...origin,
    kind: 'timeout',
    code: ErrorCode.DEADLINE_EXCEEDED,
    message: 'Deadline exceeded while waiting for a bulkhead slot',
    details: { deadline, now },
  });
}
