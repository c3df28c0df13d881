import {
  AdaptiveBulkheadStrategy,
  GradientBulkheadStrategy,
  ResiliencePolicy,
  type Strategy,
} from '@ballast/core';
import { renderLineChart, type LineSeries } from '../charts';
import { points } from '../default-charts';
import { lognormal } from '../distributions';
import { summarize } from '../metrics';
import { steps } from '../schedule';
import { simulate } from '../simulate';
import { settlingTime } from '../stats';
import { CHECKS_PLACEHOLDER, pct, secs, table } from './markdown';
import type { Check, ScenarioOutcome, ScenarioScale } from './scenario-types';

export interface CapacityChangeVariant {
  readonly name: string;
  /** Time for the limit to settle after capacity halves / recovers (ms; NaN = did not settle). */
  readonly settleDown: number;
  readonly settleUp: number;
  /** Settled limit in each phase. */
  readonly limits: readonly [number, number, number];
  /** Goodput as a fraction of each phase's capacity. */
  readonly goodput: readonly [number, number, number];
  readonly trajectory: { t: number[]; v: (number | null)[] };
}

export interface CapacityChangeMetrics {
  readonly halvedAt: number;
  readonly recoveredAt: number;
  readonly variants: readonly CapacityChangeVariant[];
}

const SERVICE = lognormal({ median: 18, sigma: 0.5 });

/** A limit sitting at (near) its maximum of 100 in every phase "settles" trivially: say what it is. */
const pinned = (v: CapacityChangeVariant): boolean => v.limits.every((l) => l >= 90);
const SLO = 120;

/**
 * Scenario 2 — the downstream loses half its servers at ⅓ of the run and gets them back at ⅔, under a constant
 * offered load of 1.5× the full capacity (so both phases are overloaded). How fast does each adaptive limit follow
 * capacity down and back up? AIMD's way down is bounded by its cooldown (one ×0.9 step per second: halving takes
 * ≥ ln 0.5 / ln 0.9 ≈ 6.6 s); its way up is additive per sample, so it is fast under heavy traffic.
 */
export async function capacityChangeScenario(
  scale: ScenarioScale,
): Promise<ScenarioOutcome<CapacityChangeMetrics>> {
  const d = scale.duration;
  const halvedAt = Math.round(d / 3);
  const recoveredAt = Math.round((2 * d) / 3);
  const capacity = (10 * 1000) / SERVICE.mean;
  const run = async (name: string, strategy: Strategy): Promise<CapacityChangeVariant> => {
    const r = await simulate({
      policy: new ResiliencePolicy({ name: 'downstream', strategies: [strategy] }),
      downstream: { servers: steps([0, 10], [halvedAt, 5], [recoveredAt, 10]), serviceTime: SERVICE },
      load: { rate: 1.5 * capacity },
      duration: d,
      seed: scale.seed,
      slo: SLO,
    });
    const tr = { t: r.samples.t, v: r.samples.replicas[0]!.limit.map((x) => x ?? 0) };
    const band = { band: 0.2, minBand: 2 };
    const s0 = settlingTime(tr, 0, halvedAt, band);
    const s1 = settlingTime(tr, halvedAt, recoveredAt, band);
    const s2 = settlingTime(tr, recoveredAt, d, band);
    const gp = (from: number, to: number, cap: number): number => summarize(r, from, to).goodputRate / cap;
    return {
      name,
      settleDown: s1.time,
      settleUp: s2.time,
      limits: [s0.settled, s1.settled, s2.settled],
      goodput: [
        gp(d / 12, halvedAt, capacity),
        gp(halvedAt, recoveredAt, capacity / 2),
        gp(recoveredAt, d, capacity),
      ],
      trajectory: { t: r.samples.t, v: r.samples.replicas[0]!.limit },
    };
  };
  const variants = [
    await run(
      'AIMD',
      new AdaptiveBulkheadStrategy({
        maxConcurrency: 100,
        latencyThreshold: 50,
        latencyQuantile: 0.9,
        window: 256,
      }),
    ),
    await run('Gradient2', new GradientBulkheadStrategy({ maxConcurrency: 100, initialLimit: 20 })),
  ];
  const metrics = { halvedAt, recoveredAt, variants };
  const gradient = variants.find((v) => v.name === 'Gradient2')!;
  const checks: Check[] = variants.flatMap((v) => [
    {
      name: `${v.name}: limit follows capacity down`,
      target: 'settles within the phase, at a lower limit',
      achieved: `${pinned(v) ? 'pinned at max' : secs(v.settleDown)}, ${v.limits[0].toFixed(0)} → ${v.limits[1].toFixed(0)}`,
      met: Number.isFinite(v.settleDown) && v.limits[1] < v.limits[0],
      measures: [
        { label: '', value: pinned(v) ? NaN : v.settleDown, better: 'lower', unit: 'secs' },
        { label: 'limit ÷ before ', value: v.limits[1] / v.limits[0], better: 'lower', unit: 'plain2' },
      ],
    },
    {
      name: `${v.name}: limit follows capacity back up`,
      target: 'settles within the phase, at a higher limit',
      achieved: `${pinned(v) ? 'pinned at max' : secs(v.settleUp)}, ${v.limits[1].toFixed(0)} → ${v.limits[2].toFixed(0)}`,
      met: Number.isFinite(v.settleUp) && v.limits[2] > v.limits[1],
      measures: [
        { label: '', value: pinned(v) ? NaN : v.settleUp, better: 'lower', unit: 'secs' },
        { label: 'limit ÷ before ', value: v.limits[2] / v.limits[1], better: 'higher', unit: 'plain2' },
      ],
    },
  ]);
  const servers: LineSeries = {
    name: 'servers (capacity)',
    data: [
      [0, 10],
      [halvedAt / 1000, 5],
      [recoveredAt / 1000, 10],
      [d / 1000, 10],
    ],
    step: true,
    dashed: true,
    color: '#000000',
  };
  return {
    id: 'capacity-change',
    title: '2. Capacity halves, then recovers: how fast the limits follow',
    metrics,
    simulations: variants.length,
    checks,
    charts: [
      {
        file: 'capacity-change-limits.svg',
        alt: 'Concurrency limits as capacity halves and recovers',
        svg: renderLineChart({
          title: 'Concurrency limit as capacity halves and recovers',
          subtitle: 'offered load constant at 1.5× full capacity',
          xName: 'time (s)',
          yName: 'limit / servers',
          series: [
            ...variants.map((v) => ({
              name: v.name,
              data: points(v.trajectory.t, v.trajectory.v, d),
              step: true,
            })),
            servers,
          ],
          markers: [
            { x: halvedAt / 1000, label: 'capacity ÷2' },
            { x: recoveredAt / 1000, label: 'recovered' },
          ],
        }),
      },
    ],
    markdown: [
      `Downstream: 10 servers, ${SERVICE.label}; at ${secs(halvedAt)} it drops to 5 servers and at ${secs(recoveredAt)} ` +
        `returns to 10. Offered load: constant Poisson at 1.5× full capacity (≈ ${Math.round(1.5 * capacity)} req/s). ` +
        `"Settled" = the first sample after which the limit stays within ±20% (at least ±2) of its level over the last ` +
        `quarter of the phase. Goodput counts successes within ${SLO} ms, as a fraction of the phase's capacity. AIMD and ` +
        `Gradient2 are configured as in scenario 1.`,
      '',
      table(
        [
          'limiter',
          'settle after ÷2',
          'settle after recovery',
          'limit: full / half / full',
          'goodput: full / half / full',
        ],
        variants.map((v) => [
          v.name,
          pinned(v) ? 'pinned at max' : secs(v.settleDown),
          pinned(v) ? 'pinned at max' : secs(v.settleUp),
          v.limits.map((x) => x.toFixed(0)).join(' / '),
          v.goodput.map(pct).join(' / '),
        ]),
      ),
      '',
      CHECKS_PLACEHOLDER,
      '',
      `AIMD's way down is bounded by its cooldown (one ×0.9 cut per second); its way up is additive per sample, so ` +
        `fast at this traffic. Gradient2 gets one sample per 1-s window (Netflix's \`WindowedLimit\` defaults; fed ` +
        `per request it sat pinned at its maximum, 100, in every phase): it follows capacity both ways ` +
        `(${gradient.limits.map((x) => x.toFixed(0)).join(' → ')}), but its way up is at most \`headroom\` × ` +
        `\`smoothing\` = +0.8 per window, hence the slower recovery, and its limit stays above the server count ` +
        `(the standing queue of scenario 1), which costs goodput while capacity is halved.`,
    ].join('\n'),
  };
}
