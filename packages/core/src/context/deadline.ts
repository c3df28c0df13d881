import { systemClock } from '../time/clock';
import type { Clock } from '../time/clock';
import { parseDuration } from '../time/duration';
import type { Duration } from '../strategies/types';
import { contextStorage, notAFunction, runInFrame0 } from './context-storage';
import type { ContextFrame } from './context-storage';

/**
 * Invocation deadlines (SPEC §5, §11.3), after gRPC deadline propagation: a caller binds a *budget* once, and
 * everything it awaits — nested calls, retries, queued bulkhead waits — shares the same absolute deadline instead
 * of each layer restarting its own timeout (Google *SRE* book, ch. 22 "Addressing Cascading Failures": propagate
 * deadlines). Nested deadlines only tighten: an inner `withDeadline` with a longer budget keeps the outer one.
 *
 * The absolute deadline is stored with the clock that measured it and always read back from that clock, so a
 * deadline set under a FakeClock is never compared with `performance.now()`.
 */
export function withDeadline<T>(budget: Duration, fn: () => T, clock: Clock = systemClock): T {
  const ms = parseDuration(budget);
  if (typeof fn !== 'function') throw notAFunction('withDeadline', fn);
  const parent = contextStorage.getStore();
  const now = clock.now();
  if (parent !== undefined && parent.deadline !== undefined && parent.deadlineClock !== undefined) {
    const parentRemaining =
      parent.deadlineClock === clock ? parent.deadline - now : parent.deadline - parent.deadlineClock.now();
    // The outer deadline is at least as tight: nothing changes, so no frame is needed.
    if (parentRemaining <= ms) return fn();
  }
  const frame: ContextFrame = {
    deadline: now + ms,
    deadlineClock: clock,
    criticality: parent?.criticality,
    call: parent?.call,
  };
  return runInFrame0(frame, fn);
}

/** ms left before the ambient deadline (≥ 0; 0 once it has passed), or `undefined` when none is bound. */
export function remainingTime(): number | undefined {
  const frame = contextStorage.getStore();
  if (frame === undefined || frame.deadline === undefined || frame.deadlineClock === undefined)
    return undefined;
  const left = frame.deadline - frame.deadlineClock.now();
  return left > 0 ? left : 0;
}

/**
 * The ambient deadline as an absolute time on `clock` (the executor's), or `undefined` when none is bound.
 * Identity when the deadline was measured on `clock`; otherwise converted through the remaining time. May lie in
 * the past. @internal
 */
export function deadlineOn(
  clock: Clock,
  frame: ContextFrame | undefined = contextStorage.getStore(),
): number | undefined {
  if (frame === undefined || frame.deadline === undefined || frame.deadlineClock === undefined)
    return undefined;
  if (frame.deadlineClock === clock) return frame.deadline;
  return clock.now() + (frame.deadline - frame.deadlineClock.now());
}
