import { describeRateLimitStoreConformance } from '@ballast/testing';
import { InMemoryRateLimitStore } from './in-memory-rate-limit-store';
import { stateKey } from './ports';

describeRateLimitStoreConformance('InMemoryRateLimitStore', () => ({ store: new InMemoryRateLimitStore() }));

describe('InMemoryRateLimitStore', () => {
  const key = stateKey('p', 'r');
  const params = { permits: 10, per: 1000, burst: 10 };

  it('answers synchronously and reuses its result object', () => {
    const store = new InMemoryRateLimitStore();
    const first = store.take(key, params, 0);
    expect(first).not.toBeInstanceOf(Promise);
    expect(store.take(key, params, 0)).toBe(first);
  });

  it('keeps the tokens a key holds through a retune instead of refilling it', () => {
    const store = new InMemoryRateLimitStore();
    for (let i = 0; i < 8; i++) store.take(key, params, 0);
    expect(store.tokens(key, { permits: 100, per: 1000, burst: 50 }, 0)).toBeCloseTo(2, 9);
    expect(store.tokens(key, { permits: 1, per: 1000, burst: 1 }, 0)).toBeCloseTo(1, 9);
  });

  it('evicts a key, bounding memory', () => {
    const store = new InMemoryRateLimitStore();
    for (let i = 0; i < 50; i++) store.take(stateKey('p', String(i)), params, 0);
    expect(store.size).toBe(50);
    for (let i = 0; i < 50; i++) store.evict(stateKey('p', String(i)));
    expect(store.size).toBe(0);
  });
});
