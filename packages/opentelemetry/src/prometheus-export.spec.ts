import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import {
  AdaptiveThrottleStrategy,
  BackoffStrategy,
  BulkheadStrategy,
  ChaosStrategy,
  CircuitBreakerStrategy,
  HedgeStrategy,
  RateLimitStrategy,
  Resilience,
  ResiliencePolicy,
  RetryStrategy,
  TimeoutStrategy,
  type RateLimitStore,
} from '@ballast/core';
import { FakeClock, seededRandom } from '@ballast/testing';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { instrumentResilience } from './instrument-resilience';
import { MetricName, PROMETHEUS_NAMES } from './metric-names';
import { infraError, settle } from './__tests__/metrics-harness';

/** One parsed sample line of the text exposition format. */
interface Sample {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

function parseExposition(text: string): {
  samples: Sample[];
  types: Map<string, string>;
  units: Map<string, string>;
} {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  const units = new Map<string, string>();
  for (const line of text.split('\n')) {
    const meta = /^# (TYPE|UNIT) (\S+) (\S+)$/.exec(line);
    if (meta) (meta[1] === 'TYPE' ? types : units).set(meta[2]!, meta[3]!);
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`unparsable exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[l[1]!] = l[2]!;
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return { samples, types, units };
}

/** GETs `/metrics` from the exporter's own request handler mounted on an ephemeral local server. */
async function scrape(exporter: PrometheusExporter): Promise<string> {
  const server = http.createServer((req, res) => exporter.getMetricsRequestHandler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    return await new Promise<string>((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port, path: '/metrics', agent: false }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (body += chunk));
          res.on('end', () => resolve(body));
        })
        .on('error', reject);
    });
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** A scripted scenario that moves every instrument, then one real scrape of the Prometheus exporter. */
async function scenarioScrape(): Promise<string> {
  const clock = new FakeClock();
  const failingRateStore: RateLimitStore = {
    take: () => Promise.reject(new Error('redis down')),
    tokens: () => Promise.reject(new Error('redis down')),
    reset: () => Promise.reject(new Error('redis down')),
  };
  const orders = new ResiliencePolicy({
    name: 'orders',
    strategies: [
      new RateLimitStrategy({ permits: 4, per: '1m' }),
      new BulkheadStrategy({ maxConcurrency: 2, maxQueue: 1 }),
      new CircuitBreakerStrategy({
        failureRatio: 0.9,
        samplingWindow: '10s',
        minThroughput: 10,
        breakDuration: '5s',
      }),
      new RetryStrategy({
        maxAttempts: 2,
        backoff: new BackoffStrategy({ base: '10ms', max: '10ms', jitter: 'none' }),
      }),
      new TimeoutStrategy({ timeout: '1s' }),
    ],
    hedge: new HedgeStrategy({ delay: '50ms', maxAttempts: 2 }),
  });
  const search = new ResiliencePolicy({
    name: 'search',
    strategies: [
      new AdaptiveThrottleStrategy({ k: 1, minThroughput: 2 }),
      // ballast.chaos.injected: latency of 0 ms changes nothing else in the scenario.
      new ChaosStrategy({ enabled: true, latency: { rate: 1, delay: 0 } }),
    ],
  });
  const resilience = new Resilience({
    policies: [orders, search],
    clock,
    random: seededRandom(3),
    stores: { rateLimit: failingRateStore },
  });
  const exporter = new PrometheusExporter({ preventServerStart: true });
  const provider = new MeterProvider({ readers: [exporter] });
  const dispose = instrumentResilience(resilience, { meter: provider.getMeter('@ballast/opentelemetry') });
  try {
    let attempts = 0;
    const flaky = settle(
      resilience.run(
        () => {
          attempts++;
          if (attempts === 1) return Promise.reject(infraError());
          return clock.sleep(20).then(() => 'ok');
        },
        { policy: 'orders', route: 'db' },
      ),
    );
    await clock.advance(100);
    expect(flaky.value).toBe('ok');
    for (let i = 0; i < 4; i++) settle(resilience.run(() => 1, { policy: 'orders', route: 'db' }));
    await clock.advance(0);
    for (let i = 0; i < 5; i++) {
      await expect(
        resilience.run(() => Promise.reject(infraError()), { policy: 'search' }),
      ).rejects.toThrow();
    }
    // An operator action: ballast.control.applied (and a non-zero ballast.control.overrides).
    await resilience.admin.forceOpen('search', undefined, { reason: 'drill' });
    return await scrape(exporter);
  } finally {
    dispose();
    await provider.shutdown();
  }
}

describe('Prometheus rendering (@opentelemetry/exporter-prometheus, real scrape)', () => {
  let scraped: ReturnType<typeof parseExposition>;
  beforeAll(async () => {
    scraped = parseExposition(await scenarioScrape());
  });

  it('renders every instrument under the names PROMETHEUS_NAMES documents', () => {
    const names = new Set(scraped.samples.map((s) => s.name));
    for (const instrument of Object.values(MetricName)) {
      for (const series of PROMETHEUS_NAMES[instrument])
        expect({ instrument, series, found: names.has(series) }).toEqual({
          instrument,
          series,
          found: true,
        });
    }
    expect(scraped.types.get('ballast_calls_total')).toBe('counter');
    expect(scraped.types.get('ballast_call_duration')).toBe('histogram');
    expect(scraped.types.get('ballast_breaker_state')).toBe('gauge');
    expect(scraped.units.get('ballast_call_duration')).toBe('ms');
    expect(scraped.units.get('ballast_hedge_delay')).toBe('ms');
  });

  it('turns attribute keys into ballast_* labels and leaves ballast_route off route-less series', () => {
    const calls = scraped.samples.filter((s) => s.name === 'ballast_calls_total');
    expect(calls).toContainEqual(
      expect.objectContaining({
        labels: expect.objectContaining({
          ballast_policy: 'orders',
          ballast_route: 'db',
          ballast_outcome: 'success',
        }),
      }),
    );
    const rejected = scraped.samples.find((s) => s.name === 'ballast_rejections_total')!;
    expect(rejected.labels).toMatchObject({
      ballast_policy: 'orders',
      ballast_route: 'db',
      ballast_code: 'rate_limited',
    });
    const degraded = scraped.samples.find((s) => s.name === 'ballast_store_degraded_total')!;
    expect(degraded.labels).toMatchObject({ ballast_store: 'rateLimit' });
    const searchCalls = calls.filter((s) => s.labels['ballast_policy'] === 'search');
    expect(searchCalls.length).toBeGreaterThan(0);
    for (const s of searchCalls) expect(Object.keys(s.labels)).not.toContain('ballast_route');
  });
});

describe('Grafana dashboard (dashboards/ballast.json)', () => {
  const dashboard = JSON.parse(
    fs.readFileSync(path.join(__dirname, '..', 'dashboards', 'ballast.json'), 'utf8'),
  ) as {
    panels: Panel[];
    templating: { list: { query?: unknown }[] };
  };
  interface Panel {
    readonly panels?: Panel[];
    readonly targets?: { expr?: string }[];
  }
  const queries = (): string[] => {
    const out: string[] = [];
    const walk = (ps: Panel[]): void => {
      for (const p of ps) {
        for (const t of p.targets ?? []) if (typeof t.expr === 'string') out.push(t.expr);
        walk(p.panels ?? []);
      }
    };
    walk(dashboard.panels);
    for (const v of dashboard.templating.list) {
      const q =
        typeof v.query === 'object' && v.query !== null ? (v.query as { query?: unknown }).query : v.query;
      if (typeof q === 'string' && q.includes('ballast_')) out.push(q);
    }
    return out;
  };
  let scraped: ReturnType<typeof parseExposition>;
  beforeAll(async () => {
    scraped = parseExposition(await scenarioScrape());
  });

  it('references only metric and label names that exist in a real scrape', () => {
    const metricNames = new Set(scraped.samples.map((s) => s.name));
    const labelNames = new Set(scraped.samples.flatMap((s) => Object.keys(s.labels)));
    const exprs = queries();
    expect(exprs.length).toBeGreaterThan(10);
    const unknown: string[] = [];
    for (const expr of exprs) {
      for (const [token] of expr.matchAll(/\bballast_[a-z0-9_]+\b/g)) {
        if (!metricNames.has(token) && !labelNames.has(token)) unknown.push(`${token} in ${expr}`);
      }
    }
    expect(unknown).toEqual([]);
  });

  it('uses metric names only where a metric goes, and filters each metric only by labels it carries', () => {
    const documented = new Set(Object.values(PROMETHEUS_NAMES).flat());
    const labelsOf = new Map<string, Set<string>>();
    for (const s of scraped.samples) {
      // ballast_route is on every series but route-less ones (the scenario's search policy has no route).
      const labels = labelsOf.get(s.name) ?? new Set<string>(['ballast_route']);
      for (const l of Object.keys(s.labels)) labels.add(l);
      labelsOf.set(s.name, labels);
    }
    const problems: string[] = [];
    for (const expr of queries()) {
      // A metric is what a selector starts with (`name{…}`) or what label_values() reads (`label_values(name, …)`).
      const selectors = [
        ...[...expr.matchAll(/\b(ballast_[a-z0-9_]+)\s*\{([^}]*)\}/g)].map((m) => [m[1]!, m[2]!] as const),
        ...[...expr.matchAll(/label_values\(\s*(ballast_[a-z0-9_]+)\s*,/g)].map((m) => [m[1]!, ''] as const),
      ];
      for (const [metric, matchers] of selectors) {
        if (!documented.has(metric)) problems.push(`${metric} is not a documented series (${expr})`);
        const labels = labelsOf.get(metric);
        if (labels === undefined) {
          problems.push(`${metric} is not in a real scrape (${expr})`);
          continue;
        }
        for (const [, label] of matchers.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)/g)) {
          if (!labels.has(label!)) problems.push(`${metric} has no label ${label} (${expr})`);
        }
      }
      const metrics = new Set(selectors.map(([m]) => m));
      // Every other ballast_* token is a label (in by (…), a legend or label_values' second argument).
      for (const [token] of expr.matchAll(/\bballast_[a-z0-9_]+\b/g)) {
        if (metrics.has(token)) continue;
        const onSome = [...metrics].some((m) => labelsOf.get(m)?.has(token));
        if (!onSome) problems.push(`${token} is not a label of ${[...metrics].join(', ')} (${expr})`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('charts every instrument', () => {
    const text = queries().join('\n');
    for (const instrument of Object.values(MetricName)) {
      const charted = PROMETHEUS_NAMES[instrument].some((series) => new RegExp(`\\b${series}\\b`).test(text));
      expect({ instrument, charted }).toEqual({ instrument, charted: true });
    }
  });

  it('filters outcomes only by values ballast.outcome can take', () => {
    const values = [
      ...queries()
        .join('\n')
        .matchAll(/ballast_outcome="([^"]*)"/g),
    ].map((m) => m[1]);
    expect(values.length).toBeGreaterThan(0);
    for (const v of values) expect(['success', 'failure', 'rejected', 'cancelled']).toContain(v);
  });
});
