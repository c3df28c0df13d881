import type { TestBench } from './harness';
import type { BreakerParamsShape, CircuitBreakerStoreShape, ConformanceKey } from './store-shapes';

/* The parameters and call helpers the circuit-breaker conformance suite is written with. */

export type Bench = TestBench<CircuitBreakerStoreShape>;
export interface Permit {
  readonly generation: number;
  readonly lease: string | undefined;
}

export const BASE: BreakerParamsShape = Object.freeze({
  failureRatio: 0.5,
  samplingWindow: 1000,
  minThroughput: 10,
  breakDuration: 5000,
  halfOpenMaxCalls: 1,
});
export const params = (over: Partial<BreakerParamsShape> = {}): BreakerParamsShape => ({ ...BASE, ...over });

/** Admits one call and copies its permit (results may be reused objects). */
export async function admit(b: Bench, key: ConformanceKey, p: BreakerParamsShape): Promise<Permit> {
  const a = await b.store.acquire(key, p, b.now());
  if (!a.admitted) throw new Error(`expected an admission, got a rejection in state ${a.state}`);
  return { generation: a.generation, lease: a.lease };
}

/** Runs `n` calls with the given outcome at the current time. */
export async function calls(
  b: Bench,
  key: ConformanceKey,
  p: BreakerParamsShape,
  n: number,
  failure: boolean,
) {
  let last: { state: string; transition: unknown } = { state: 'closed', transition: undefined };
  for (let i = 0; i < n; i++) {
    const permit = await admit(b, key, p);
    const r = await b.store.record(key, p, permit, failure ? 'failure' : 'success', b.now());
    last = { state: r.state, transition: r.transition };
  }
  return last;
}

/** Trips the breaker, waits out the break and returns the first probe's admission (copied). */
export async function toHalfOpen(b: Bench, key: ConformanceKey, p: BreakerParamsShape) {
  await calls(b, key, p, p.minThroughput, true);
  await b.advance(p.breakDuration);
  const a = await b.store.acquire(key, p, b.now());
  if (!a.admitted) throw new Error(`expected the first half-open probe, got a rejection in state ${a.state}`);
  return { ...a };
}
