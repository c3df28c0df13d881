import {
  AdaptiveBulkheadStrategy,
  BulkheadStrategy,
  GradientBulkheadStrategy,
  ResiliencePolicy,
  type Strategy,
} from '@ballast/core';
import { renderBarChart, renderLineChart } from '../charts';
import { points } from '../default-charts';
import { lognormal } from '../distributions';
import { summarize } from '../metrics';
import { simulate } from '../simulate';
import { CHECKS_PLACEHOLDER, ms, pct, table } from './markdown';
import type { Check, ScenarioOutcome, ScenarioScale } from './scenario-types';

/** One limiter's steady-state result under 3× overload. */
export interface OverloadVariant {
  readonly name: string;
  /** Goodput (successes within the SLO) as a fraction of the downstream's capacity. */
  readonly goodputFraction: number;
  readonly p99: number;
  /** p99 of successes ÷ p99 at no load. */
  readonly p99Ratio: number;
  readonly meanLimit: number | undefined;
  /** p99 of the time spent waiting in the bulkhead queue (0 without a queue). */
  readonly queueWaitP99: number;
  readonly limit: { t: number[]; v: (number | null)[] };
}

export interface OverloadMetrics {
  readonly capacity: number;
  readonly duration: number;
  readonly noLoadP50: number;
  readonly noLoadP99: number;
  readonly slo: number;
  readonly variants: readonly OverloadVariant[];
  /** Gradient2 with other headroom values (the investigation of its miss). */
  readonly gradientSensitivity: readonly OverloadVariant[];
}

const SERVERS = 10;
/** Requests of the no-load baseline run (10% load, ≈ 34 virtual minutes): its p99 is the 1,000th-slowest. */
export const NO_LOAD_REQUESTS = 100_000;
const SERVICE = lognormal({ median: 18, sigma: 0.5 });
const QUEUE = { maxQueue: 50, queueTarget: 5, queueInterval: 100, queueAdaptiveLifo: true } as const;
/** A user who knows their service's no-load p90 (~34 ms here) sets the AIMD threshold a bit above it. */
const AIMD = { maxConcurrency: 100, latencyThreshold: 50, latencyQuantile: 0.9, window: 256 } as const;
const GRADIENT = { maxConcurrency: 100, initialLimit: 20 } as const;

function policy(strategies: Strategy[]): ResiliencePolicy {
  return new ResiliencePolicy({ name: 'downstream', strategies });
}

/**
 * Scenario 1 — offered load at 3× what the downstream can serve (Little's law: 10 servers ÷ 20.4 ms mean ≈ 490
 * req/s). Without a limiter the downstream queue grows without bound and every request eventually misses its
 * SLO; a fixed bulkhead is only as good as its guess; the adaptive bulkheads should find the limit themselves.
 */
export async function overloadScenario(scale: ScenarioScale): Promise<ScenarioOutcome<OverloadMetrics>> {
  const downstream = { servers: SERVERS, serviceTime: SERVICE };
  const capacity = (SERVERS * 1000) / SERVICE.mean;
  // The 2× bar divides by this p99, so it is measured over NO_LOAD_REQUESTS requests, not one run's few thousand:
  // at 10% load a 60 s run has ~2,900, and its p99 (its 29th-slowest request) moved the bar by several % per seed.
  const noLoadRate = capacity * 0.1;
  const noLoad = summarize(
    await simulate({
      policy: policy([]),
      downstream,
      load: { rate: noLoadRate },
      duration: Math.round((NO_LOAD_REQUESTS / noLoadRate) * 1000),
      seed: scale.seed,
    }),
  );
  const slo = 2 * noLoad.latency.p99;
  // AIMD starts at maxConcurrency (100) and cuts 10% per 1 s cooldown: ~15 s to reach ~20.
  const warmup = Math.min(15_000, scale.duration / 2);
  const run = async (name: string, strategies: Strategy[]): Promise<OverloadVariant> => {
    const r = await simulate({
      policy: policy(strategies),
      downstream,
      load: { rate: 3 * capacity },
      duration: scale.duration,
      seed: scale.seed,
      slo,
    });
    const s = summarize(r, warmup, scale.duration);
    const limit = r.samples.replicas[0]!.limit;
    const steady = limit.filter(
      (x, i): x is number => x !== null && r.samples.t[i]! >= warmup && r.samples.t[i]! < scale.duration,
    );
    return {
      name,
      goodputFraction: s.goodputRate / capacity,
      p99: s.latency.p99,
      p99Ratio: s.latency.p99 / noLoad.latency.p99,
      meanLimit: steady.length === 0 ? undefined : steady.reduce((a, b) => a + b, 0) / steady.length,
      queueWaitP99: s.queueWait.p99,
      limit: { t: r.samples.t, v: limit },
    };
  };
  const variants = [
    await run('no limiter', []),
    await run('fixed bulkhead (guess: 50)', [new BulkheadStrategy({ maxConcurrency: 50 })]),
    await run('AIMD', [new AdaptiveBulkheadStrategy(AIMD)]),
    await run('AIMD + CoDel/LIFO', [new AdaptiveBulkheadStrategy({ ...AIMD, ...QUEUE })]),
    await run('Gradient2', [new GradientBulkheadStrategy(GRADIENT)]),
    await run('Gradient2 + CoDel/LIFO', [new GradientBulkheadStrategy({ ...GRADIENT, ...QUEUE })]),
  ];
  const gradientSensitivity =
    scale.investigate === false
      ? []
      : [
          await run('Gradient2, headroom 1', [new GradientBulkheadStrategy({ ...GRADIENT, headroom: 1 })]),
          await run('Gradient2, headroom 2', [new GradientBulkheadStrategy({ ...GRADIENT, headroom: 2 })]),
        ];
  const metrics: OverloadMetrics = {
    capacity,
    duration: scale.duration,
    noLoadP50: noLoad.latency.p50,
    noLoadP99: noLoad.latency.p99,
    slo,
    variants,
    gradientSensitivity,
  };
  const checks: Check[] = variants
    .filter((v) => v.name.startsWith('AIMD') || v.name.startsWith('Gradient2'))
    .map((v) => ({
      name: v.name,
      target: 'goodput ≥ 90% of capacity, p99 ≤ 2× no-load',
      achieved: `${pct(v.goodputFraction)}, p99 ${v.p99Ratio.toFixed(2)}×`,
      met: v.goodputFraction >= 0.9 && v.p99Ratio <= 2,
      measures: [
        { label: '', value: v.goodputFraction, better: 'higher', unit: 'pct' },
        { label: 'p99 ', value: v.p99Ratio, better: 'lower', unit: 'times' },
      ],
    }));
  return {
    id: 'overload',
    title: '1. 3× overload: no limiter, fixed bulkhead, AIMD, Gradient2 (± CoDel / adaptive LIFO)',
    metrics,
    simulations: 1 + variants.length + gradientSensitivity.length,
    checks,
    charts: charts(metrics),
    markdown: markdown(metrics, checks, scale),
  };
}

function charts(m: OverloadMetrics): ScenarioOutcome<OverloadMetrics>['charts'] {
  const names = m.variants.map((v) => v.name);
  const adaptive = m.variants.filter((v) => v.meanLimit !== undefined && !v.name.startsWith('fixed'));
  return [
    {
      file: 'overload-goodput.svg',
      alt: 'Goodput as a fraction of capacity, per limiter',
      svg: renderBarChart({
        title: 'Goodput under 3× overload (% of capacity)',
        subtitle: `successes within the SLO (${Math.round(m.slo)} ms = 2× no-load p99); target ≥ 90%`,
        categories: names,
        yName: '% of capacity',
        series: [{ name: 'goodput', values: m.variants.map((v) => +(v.goodputFraction * 100).toFixed(1)) }],
      }),
    },
    {
      file: 'overload-p99.svg',
      alt: 'p99 latency of successful requests relative to no-load p99',
      svg: renderBarChart({
        title: 'p99 latency ÷ no-load p99 (log scale)',
        subtitle: `no-load p99 ${Math.round(m.noLoadP99)} ms; target ≤ 2×`,
        categories: names,
        yName: '× no-load p99',
        logY: true,
        series: [
          { name: 'p99 ratio', values: m.variants.map((v) => +v.p99Ratio.toFixed(2)), color: '#D55E00' },
        ],
      }),
    },
    {
      file: 'overload-limits.svg',
      alt: 'Concurrency limit over time for the adaptive bulkheads',
      svg: renderLineChart({
        title: 'Concurrency limit over time',
        subtitle: `${SERVERS} servers downstream: the ideal limit is a little above ${SERVERS}`,
        xName: 'time (s)',
        yName: 'limit',
        series: adaptive.map((v) => ({
          name: v.name,
          data: points(v.limit.t, v.limit.v, m.duration),
          step: true,
        })),
      }),
    },
  ];
}

function markdown(m: OverloadMetrics, checks: Check[], scale: ScenarioScale): string {
  const row = (v: OverloadVariant): (string | number)[] => [
    v.name,
    pct(v.goodputFraction),
    ms(v.p99),
    `${v.p99Ratio.toFixed(2)}×`,
    v.meanLimit === undefined ? '—' : v.meanLimit.toFixed(1),
    ms(v.queueWaitP99),
  ];
  const header = [
    'limiter',
    'goodput (of capacity)',
    'p99',
    'p99 ÷ no-load p99',
    'mean limit',
    'queue wait p99',
  ];
  const codel = m.variants.find((v) => v.name === 'AIMD + CoDel/LIFO')!;
  const g = m.variants.find((v) => v.name === 'Gradient2')!;
  const cg = m.variants.find((v) => v.name === 'Gradient2 + CoDel/LIFO')!;
  return [
    `Downstream: ${SERVERS} servers, service time ${SERVICE.label} (mean ${SERVICE.mean.toFixed(1)} ms), so capacity ` +
      `≈ ${Math.round(m.capacity)} req/s. Offered: Poisson at 3× capacity for ${scale.duration / 1000} s, one replica. ` +
      `No-load latency (10% load, no limiter, over ${NO_LOAD_REQUESTS.toLocaleString('en-US')} requests): p50 ${ms(m.noLoadP50)}, p99 ${ms(m.noLoadP99)}; SLO for goodput = 2× no-load p99 ` +
      `= ${ms(m.slo)}. Steady state is measured after a ${Math.min(15, scale.duration / 2000)} s warm-up (AIMD starts at its ` +
      `maximum, 100, and cuts 10% per second). Latency is from arrival to ` +
      `response of successful requests; rejected requests fail fast and count against goodput. AIMD: threshold 50 ms on ` +
      `the windowed p90 (no-load p90 ≈ 34 ms); Gradient2: library defaults; CoDel/LIFO: queue of 50, target 5 ms, interval 100 ms, adaptive LIFO.`,
    '',
    table(header, m.variants.map(row)),
    '',
    CHECKS_PLACEHOLDER,
    '',
    `**CoDel.** \`CoDelQueue\` counts the queue as empty when a consumer finds it empty — here, a released ` +
      `slot with nobody waiting — or when serving its last waiter leaves it empty for at least the target; not ` +
      `when its own shedding empties it, nor when an arrival refills it within the target (until this was fixed, ` +
      `those instants reset congestion several times a second and the queue wait p99 was ~70 ms). ` +
      `The p99 wait is still ${ms(codel.queueWaitP99)} against the 5 ms target, and that is the algorithm, not a ` +
      `leak: with a 5 ms target the congested queue holds only the last ~5 ms of arrivals (~7 waiters at 3×), ` +
      `so a Poisson lull of a few ms empties it and the next release finds nobody waiting — capacity really went ` +
      `idle, a few times a second. Fail at Scale then grants the lenient allowance (\`interval\`, 100 ms, served ` +
      `FIFO) until the queue has again not been found empty for 100 ms, and the waits of those calm periods make ` +
      `the p99. A target nearer the release gaps' spread, or a shorter interval, trades that against idle slots. ` +
      `With AIMD + CoDel/LIFO the end-to-end p99 is ${codel.p99Ratio.toFixed(2)}× no-load here; Gradient2 keeps ~${cg.meanLimit?.toFixed(0)} calls in ` +
      `flight on ${SERVERS} servers, so its downstream RTT plus those queue waits exceed the SLO for the tail ` +
      `(${pct(cg.goodputFraction)} goodput, p99 ${cg.p99Ratio.toFixed(2)}×).`,
    '',
    `**Gradient2.** The gradient bulkhead feeds Gradient2 through a sample window as Netflix deploys it ` +
      `(\`WindowedLimit\`: one sample per window of ≥ 10 successes and ≥ 1 s, the window's average RTT and most in ` +
      `flight). Fed one sample per request, as before, its long-run average chased every sample and \`headroom\` ` +
      `kept adding: 88.2% goodput at p99 2.83× here, and pinned at its maximum in scenarios 2 and 3. Windowed, it ` +
      `holds ~${g.meanLimit?.toFixed(0)} with ${SERVERS} servers (${pct(g.goodputFraction)} goodput, p99 ` +
      `${g.p99Ratio.toFixed(2)}×): still above the ideal, because Gradient2 compares RTT with a long-run *average* ` +
      `(not a minimum) and allows \`rttTolerance\` 1.5× of it before cutting, so its fixed point keeps a standing ` +
      `downstream queue; \`headroom\` sets how much:`,
    '',
    table(header, m.gradientSensitivity.map(row)),
    '',
    `AIMD on a latency quantile keeps the lowest latency of the adaptive limiters here.`,
  ].join('\n');
}
