import { describeLatencyDigestStoreConformance } from '@ballast/testing';
import { InMemoryLatencyDigestStore } from './in-memory-latency-digest-store';
import { stateKey } from './ports';

describeLatencyDigestStoreConformance('InMemoryLatencyDigestStore', () => ({
  store: new InMemoryLatencyDigestStore(),
}));

describe('InMemoryLatencyDigestStore', () => {
  const key = stateKey('p', 'r');

  it('answers after five samples, like WindowedP2Quantile', () => {
    const store = new InMemoryLatencyDigestStore();
    const p = { quantile: 0.5, window: 16 };
    for (let i = 1; i <= 4; i++) expect(store.observe(key, p, i, 0)).toBeUndefined();
    expect(store.observe(key, p, 5, 0)).toBe(3);
    expect(store.read(key, p, 0)).toBe(3);
  });

  it('starts a fresh estimator when the window is retuned', () => {
    const store = new InMemoryLatencyDigestStore();
    for (let i = 1; i <= 10; i++) store.observe(key, { quantile: 0.5, window: 16 }, i, 0);
    expect(store.read(key, { quantile: 0.5, window: 32 }, 0)).toBeUndefined();
    expect(store.observe(key, { quantile: 0.5, window: 32 }, 7, 0)).toBeUndefined();
  });

  it('evicts a key, bounding memory', () => {
    const store = new InMemoryLatencyDigestStore();
    store.observe(key, { quantile: 0.5, window: 16 }, 1, 0);
    expect(store.size).toBe(1);
    store.evict(key);
    expect(store.size).toBe(0);
  });
});
