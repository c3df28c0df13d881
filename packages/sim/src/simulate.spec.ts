import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AdaptiveBulkheadStrategy,
  BackoffStrategy,
  ChaosStrategy,
  RateLimitStrategy,
  ResiliencePolicy,
  RetryStrategy,
  TimeoutStrategy,
} from '@ballast/core';
import { exponential } from './distributions';
import { summarize, timeSeries } from './metrics';
import { steps } from './schedule';
import { simulate } from './simulate';
import type { SimulationOptions, SimulationResult } from './simulation-types';

const policy = new ResiliencePolicy({
  name: 'api',
  strategies: [
    new AdaptiveBulkheadStrategy({
      maxConcurrency: 40,
      latencyThreshold: 60,
      latencyQuantile: 0.9,
      window: 128,
    }),
    new TimeoutStrategy({ timeout: 200 }),
    new RetryStrategy({
      maxAttempts: 2,
      retryOn: ['infrastructure'],
      backoff: new BackoffStrategy({ base: 5, max: 50 }),
    }),
  ],
});

const base: SimulationOptions = {
  policy,
  seed: 42,
  duration: 6000,
  slo: 150,
  replicas: 2,
  downstream: { servers: 5, serviceTime: exponential(20), errorRate: steps([0, 0], [3000, 0.1]) },
  load: { rate: 400, criticality: { NORMAL: 3, BEST_EFFORT: 1 } },
};

/** Everything but wall time, as comparable JSON. */
function fingerprint(r: SimulationResult): string {
  const log = r.log;
  return JSON.stringify({
    rows: [
      Array.from(log.arrival.subarray(0, log.length)),
      Array.from(log.end.subarray(0, log.length)),
      Array.from(log.outcome.subarray(0, log.length)),
    ],
    labels: log.labels,
    samples: r.samples,
    events: r.events,
    fired: r.eventsFired,
  });
}

describe('simulate', () => {
  it('same seed → identical results; another seed → different ones', async () => {
    const a = await simulate(base);
    const b = await simulate(base);
    const c = await simulate({ ...base, seed: 43 });
    expect(fingerprint(a)).toBe(fingerprint(b));
    expect(fingerprint(a)).not.toBe(fingerprint(c));
    expect(a.log.length).toBeGreaterThan(2000);
  });

  it("the fast 'tick' drain gives exactly the reference 'immediate' (setImmediate) result", async () => {
    const tick = await simulate({ ...base, duration: 3000 });
    const immediate = await simulate({ ...base, duration: 3000, drain: 'immediate' });
    expect(fingerprint(tick)).toBe(fingerprint(immediate));
  });

  it('accounts for every request and exposes goodput, codes, per-replica and downstream totals', async () => {
    const r = await simulate(base);
    const s = summarize(r);
    expect(s.requests).toBe(r.log.length);
    expect(s.succeeded + s.rejectedTotal + s.failedTotal + s.unfinished).toBe(s.requests);
    expect(s.goodput).toBeLessThanOrEqual(s.succeeded);
    expect(s.latency.p99).toBeGreaterThanOrEqual(s.latency.p50);
    expect(s.perReplica.map((p) => p.requests).reduce((x, y) => x + y, 0)).toBe(s.requests);
    expect(s.byCriticality.requests[0]! + s.byCriticality.requests[2]!).toBe(s.requests);
    // 10% errors after 3 s with one retry: the downstream sees more attempts than requests.
    expect(s.failed['downstream_error'] ?? 0).toBeGreaterThan(0);
    expect(r.events.retries).toBeGreaterThan(0);
    // Every admitted request reaches the downstream once, plus once per retry — nothing lost or invented.
    const all = summarize(r, 0, r.duration + 5000);
    expect(all.downstream.attempts).toBe(all.requests - all.rejectedTotal + r.events.retries);
    expect(Math.round(all.amplification * all.requests)).toBe(all.downstream.attempts);
    expect(r.capacity).toBe(250);
    const ts = timeSeries(r);
    expect(ts.t).toHaveLength(6);
    expect(ts.offered.reduce((x, y) => x + y, 0)).toBe(s.requests);
    const limits = r.samples.replicas[0]!.limit.filter((x) => x !== null);
    expect(limits.length).toBeGreaterThan(10);
    expect(Math.min(...limits)).toBeLessThan(40);
  });

  it('writes its default charts as SVG when asked', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ballast-sim-'));
    const r = await simulate({ ...base, duration: 2000, charts: { dir, name: 'demo' } });
    expect(r.charts.map((p) => p.slice(dir.length + 1))).toEqual([
      'demo-throughput.svg',
      'demo-latency.svg',
      'demo-limit.svg',
    ]);
    expect(readFileSync(r.charts[0]!, 'utf8')).toMatch(/^<svg[\s\S]*Throughput[\s\S]*<\/svg>$/);
  });

  it('a shadow-mode policy refuses nothing, and reports the refusals the enforced policy makes', async () => {
    const limit = (mode: 'enforce' | 'shadow') =>
      new ResiliencePolicy({
        name: 'api',
        mode,
        strategies: [new RateLimitStrategy({ permits: 150, per: '1s', burst: 20 })],
      });
    const options = { ...base, duration: 3000, replicas: 1 };
    const enforced = await simulate({ ...options, policy: limit('enforce') });
    const shadow = await simulate({ ...options, policy: limit('shadow') });
    const rejected = summarize(enforced).rejected;
    expect(rejected['rate_limited']).toBeGreaterThan(100);
    expect(summarize(shadow).rejectedTotal).toBe(0);
    expect(shadow.events.shadowRejected).toEqual(rejected);
    expect(enforced.events.shadowRejected).toEqual({});
  });

  it('tallies chaos injections by kind', async () => {
    const chaotic = new ResiliencePolicy({
      name: 'api',
      strategies: [
        new ChaosStrategy({ enabled: true, fault: { rate: 0.1 }, latency: { rate: 0.2, delay: 5 } }),
      ],
    });
    const r = await simulate({ ...base, duration: 2000, replicas: 1, policy: chaotic });
    const { fault, latency, outcome } = r.events.chaosInjected;
    const requests = summarize(r).requests;
    expect(outcome).toBe(0);
    // Fault on 10 % of attempts, latency on 20 % of the rest (seeded: ±5σ bounds cannot flake).
    expect(Math.abs(fault - 0.1 * requests)).toBeLessThan(5 * Math.sqrt(requests * 0.1 * 0.9));
    expect(Math.abs(latency - 0.18 * requests)).toBeLessThan(5 * Math.sqrt(requests * 0.18 * 0.82));
    // The injected faults are the run's only failures (a plain Error: the sim labels it by its name).
    expect(summarize(r).failed).toEqual({ Error: fault });
  });

  it('rejects invalid options, naming each', async () => {
    await expect(simulate({ ...base, replicas: 0, duration: -1 })).rejects.toThrow(
      /replicas must be an integer.*duration must be > 0/,
    );
    await expect(simulate({ ...base, fanOut: 1.5 })).rejects.toThrow(
      'fanOut must be an integer ≥ 1, got 1.5',
    );
  });

  it('fans each request out to `fanOut` leaf calls and ends it with the slowest', async () => {
    const plain = new ResiliencePolicy({ name: 'api', strategies: [] });
    const opts: SimulationOptions = {
      policy: plain,
      seed: 3,
      duration: 4000,
      load: { rate: 50 },
      downstream: { servers: 100, serviceTime: exponential(10) },
    };
    const one = summarize(await simulate(opts));
    const r = await simulate({ ...opts, fanOut: 8 });
    const eight = summarize(r);
    expect(eight.requests).toBe(one.requests); // the same arrivals
    expect(eight.succeeded).toBe(eight.requests);
    expect(eight.downstream.attempts).toBe(8 * eight.requests);
    expect(eight.amplification).toBe(8);
    // The max of 8 exponentials (mean 10) has mean 10·H(8) ≈ 27 ms.
    expect(eight.latency.p50).toBeGreaterThan(2 * one.latency.p50);
  });
});
