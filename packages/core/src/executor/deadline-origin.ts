import type { Clock } from '../time/clock';

/**
 * Which bound deadline a `deadline_exceeded` error ended: the absolute deadline of the `withDeadline` frame and the
 * clock it is measured on. A call whose `fn` rethrows a nested call's `deadline_exceeded` needs it to tell its own
 * budget running out — the nested call shares the frame and, converting it later, may time out first: cancelled,
 * not the dependency's health — from a tighter deadline `fn` bound around the nested call, which is a timeout like
 * any other (a failure). Only deadline errors are recorded, when a call ends with one: nothing on the happy path.
 */
const origins = new WeakMap<object, { readonly deadline: number; readonly clock: Clock | undefined }>();

/** Records the frame deadline `error` ended, unless a nested call already recorded its own. */
export function recordDeadlineOrigin(
  error: object,
  deadline: number | undefined,
  clock: Clock | undefined,
): void {
  if (deadline !== undefined && !origins.has(error)) origins.set(error, { deadline, clock });
}

/** True when `error` ended the same bound deadline as the frame (`deadline`, `clock`). */
export function endedDeadline(
  error: object,
  deadline: number | undefined,
  clock: Clock | undefined,
): boolean {
  const origin = origins.get(error);
  return origin !== undefined && origin.deadline === deadline && origin.clock === clock;
}
