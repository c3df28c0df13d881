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

  it('keeps the latest time seen through a retune, so a clock stepping back gains nothing', () => {
    const store = new InMemoryRateLimitStore();
    for (let i = 0; i < 10; i++) store.take(key, params, 0);
    expect(store.tokens(key, params, 800)).toBeCloseTo(8, 9);
    // The clock steps back to 100; the retune (burst 10 → 4) keeps the 4 tokens the new burst allows.
    const smaller = { permits: 10, per: 1000, burst: 4 };
    const first = store.take(key, smaller, 100);
    expect(first.ok && first.tokens).toBeCloseTo(3, 9);
    expect(store.tokens(key, smaller, 500)).toBeCloseTo(3, 9);
    expect(store.tokens(key, smaller, 850)).toBeCloseTo(3.5, 9);
    expect(store.tokens(key, smaller, 900)).toBeCloseTo(4, 9);
  });

  it('evicts a key, bounding memory', () => {
    const store = new InMemoryRateLimitStore();
    for (let i = 0; i < 50; i++) store.take(stateKey('p', String(i)), params, 0);
    expect(store.size).toBe(50);
    for (let i = 0; i < 50; i++) store.evict(stateKey('p', String(i)));
    expect(store.size).toBe(0);
  });
});
