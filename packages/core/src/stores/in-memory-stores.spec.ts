import { stateKey, type BreakerParams } from './ports';
import { InMemoryCircuitBreakerStore } from './in-memory-circuit-breaker-store';
import { InMemoryRateLimitStore } from './in-memory-rate-limit-store';
import { InMemoryLatencyDigestStore } from './in-memory-latency-digest-store';

const key = stateKey('p', 'r');
const params: BreakerParams = {
  failureRatio: 0.5,
  samplingWindow: 1000,
  minThroughput: 4,
  breakDuration: 500,
  halfOpenMaxCalls: 1,
};

describe('in-memory stores (smoke)', () => {
  it('breaker: trips, half-opens, closes', () => {
    const s = new InMemoryCircuitBreakerStore();
    for (let i = 0; i < 4; i++) {
      const a = s.acquire(key, params, 0);
      if (!a.admitted) throw new Error('rejected');
      s.record(key, params, { generation: a.generation, lease: a.lease }, i < 2 ? 'failure' : 'success', 0);
    }
    const r = s.acquire(key, params, 10);
    expect(r).toMatchObject({ admitted: false, state: 'open', retryAfter: 490 });
    const p = s.acquire(key, params, 500);
    expect(p).toMatchObject({
      admitted: true,
      state: 'half_open',
      transition: { from: 'open', to: 'half_open' },
    });
    if (!p.admitted) throw new Error('rejected');
    expect(s.acquire(key, params, 501).admitted).toBe(false);
    const rec = s.record(key, params, { generation: p.generation, lease: p.lease }, 'success', 502);
    expect(rec).toEqual({ state: 'closed', transition: { from: 'half_open', to: 'closed' } });
  });

  it('rate limit: burst then retryAfter', () => {
    const s = new InMemoryRateLimitStore();
    const rl = { permits: 2, per: 1000, burst: 2 };
    expect(s.take(key, rl, 0).ok).toBe(true);
    expect(s.take(key, rl, 0).ok).toBe(true);
    expect(s.take(key, rl, 0)).toEqual({ ok: false, tokens: 0, retryAfter: 500 });
  });

  it('digest: warms up', () => {
    const s = new InMemoryLatencyDigestStore();
    const dp = { quantile: 0.5, window: 16 };
    for (let i = 1; i <= 4; i++) expect(s.observe(key, dp, i, 0)).toBeUndefined();
    expect(s.observe(key, dp, 5, 0)).toBe(3);
  });
});
