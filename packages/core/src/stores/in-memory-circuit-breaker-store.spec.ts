import { describeCircuitBreakerStoreConformance } from '@ballast/testing';
import { InMemoryCircuitBreakerStore } from './in-memory-circuit-breaker-store';
import { stateKey, type BreakerParams } from './ports';

describeCircuitBreakerStoreConformance('InMemoryCircuitBreakerStore', () => ({
  store: new InMemoryCircuitBreakerStore(),
}));

const params: BreakerParams = {
  failureRatio: 0.5,
  samplingWindow: 1000,
  minThroughput: 4,
  breakDuration: 500,
  halfOpenMaxCalls: 1,
};

describe('InMemoryCircuitBreakerStore', () => {
  it('answers synchronously and reuses its closed admission object (no allocation on the hot path)', () => {
    const store = new InMemoryCircuitBreakerStore();
    const key = stateKey('p', 'r');
    const first = store.acquire(key, params, 0);
    expect(first).not.toBeInstanceOf(Promise);
    expect(store.acquire(key, params, 1)).toBe(first);
    const r1 = store.record(key, params, { generation: 0, lease: undefined }, 'success', 1);
    expect(store.record(key, params, { generation: 0, lease: undefined }, 'success', 2)).toBe(r1);
  });

  it('evicts a key, bounding memory', () => {
    const store = new InMemoryCircuitBreakerStore();
    for (let i = 0; i < 100; i++) store.acquire(stateKey('p', String(i)), params, 0);
    expect(store.size).toBe(100);
    for (let i = 0; i < 100; i++) store.evict(stateKey('p', String(i)));
    expect(store.size).toBe(0);
  });

  it('keeps its window through a clock that steps back less than a window, and re-buckets it for a retuned samplingWindow', () => {
    const store = new InMemoryCircuitBreakerStore();
    const key = stateKey('p', undefined);
    store.acquire(key, params, 5000);
    store.record(key, params, { generation: 0, lease: undefined }, 'failure', 5000);
    store.record(key, params, { generation: 0, lease: undefined }, 'success', 4100); // 0.9 window back
    expect(store.inspect(key, params, 5000)).toMatchObject({ state: 'closed', calls: 2 });
    // a whole window back starts over there (conformance: "starts the window over when the clock steps back")
    store.record(key, params, { generation: 0, lease: undefined }, 'success', 4000);
    expect(store.inspect(key, params, 4000)).toMatchObject({ state: 'closed', calls: 1 });
    // retuned: the outcome of t=4000 is inside a 2 s window at t=5000, outside a 0.5 s one
    expect(store.inspect(key, { ...params, samplingWindow: 2000 }, 5000)).toMatchObject({ calls: 1 });
    expect(store.inspect(key, { ...params, samplingWindow: 500 }, 5000)).toMatchObject({ calls: 0 });
  });
});
