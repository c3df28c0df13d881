/** One step of a {@link Schedule}: from `at` (ms of virtual time) on, the value is `value`. */
export interface Step {
  readonly at: number;
  readonly value: number;
}

/**
 * A quantity that changes over time as a step function — the arrival rate, the number of servers, a latency
 * factor, an error rate. A plain number is constant. Steps must be sorted by `at`; before the first step the
 * first value applies. Step functions keep Poisson arrivals exact (the rate is constant between steps) and
 * make "outage at 20 s, recovery at 40 s" a one-liner.
 */
export type Schedule = number | readonly Step[];

/** Builds a schedule from `[at, value]` pairs, validating the order. */
export function steps(...pairs: readonly (readonly [number, number])[]): readonly Step[] {
  const out = pairs.map(([at, value]) => ({ at, value }));
  checkSchedule('steps', out);
  return out;
}

/** Throws a RangeError unless `s` is a finite number or non-empty steps sorted by time. */
export function checkSchedule(name: string, s: Schedule, min = 0): void {
  if (typeof s === 'number') {
    if (!(Number.isFinite(s) && s >= min))
      throw new RangeError(`${name} must be a finite number ≥ ${min}, got ${s}`);
    return;
  }
  if (s.length === 0) throw new RangeError(`${name} must have at least one step`);
  let prev = -Infinity;
  for (const st of s) {
    if (!(Number.isFinite(st.at) && st.at >= prev))
      throw new RangeError(`${name}: steps must be sorted by time, got ${st.at} after ${prev}`);
    if (!(Number.isFinite(st.value) && st.value >= min))
      throw new RangeError(`${name}: values must be finite and ≥ ${min}, got ${st.value}`);
    prev = st.at;
  }
}

/** The value of `s` at time `t`. */
export function valueAt(s: Schedule, t: number): number {
  if (typeof s === 'number') return s;
  let v = s[0]!.value;
  for (const st of s) {
    if (st.at > t) break;
    v = st.value;
  }
  return v;
}

/** The first instant after `t` at which `s` changes, or Infinity. */
export function nextChange(s: Schedule, t: number): number {
  if (typeof s === 'number') return Infinity;
  for (const st of s) if (st.at > t) return st.at;
  return Infinity;
}

/** Every instant at which `s` changes (for models that must react to it). */
export function changeTimes(s: Schedule): number[] {
  return typeof s === 'number' ? [] : s.map((st) => st.at);
}
