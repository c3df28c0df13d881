import { BackoffStrategy, ResiliencePolicy, RetryBudget, RetryStrategy } from '@ballast/core';
import { renderLineChart } from '../charts';
import { lognormal } from '../distributions';
import { summarize, timeSeries } from '../metrics';
import { steps } from '../schedule';
import { simulate } from '../simulate';
import { CHECKS_PLACEHOLDER, pct, secs, table } from './markdown';
import type { Check, ScenarioOutcome, ScenarioScale } from './scenario-types';

export interface RetryStormVariant {
  readonly name: string;
  /** Downstream attempts per client request during the outage. */
  readonly amplification: number;
  /** … and while healthy (after the outage). */
  readonly healthyAmplification: number;
  readonly successAfter: number;
  readonly series: { t: number[]; attempts: number[] };
}

export interface RetryStormMetrics {
  readonly outage: readonly [number, number];
  readonly ratio: number;
  readonly variants: readonly RetryStormVariant[];
}

const SERVICE = lognormal({ median: 18, sigma: 0.5 });
const RATIO = 0.1;

/**
 * Scenario 7 — a hard outage (every request refused with 503 after 2 ms) from ⅓ to ⅔ of the run. Plain retry
 * multiplies the load on the failing dependency by `maxAttempts` exactly when it can least afford it — the retry
 * storm of the SRE book (ch. 22, "Addressing Cascading Failures"). A retry budget (each call earns `ratio`
 * tokens, each retry spends one; Finagle's RetryBudget) caps the extra load at `ratio` of the traffic.
 */
export async function retryStormScenario(scale: ScenarioScale): Promise<ScenarioOutcome<RetryStormMetrics>> {
  const d = scale.duration;
  const outage: [number, number] = [Math.round(d / 3), Math.round((2 * d) / 3)];
  const backoff = new BackoffStrategy({ base: 10, max: 200 });
  const run = async (name: string, retry: RetryStrategy | undefined): Promise<RetryStormVariant> => {
    const r = await simulate({
      policy: new ResiliencePolicy({ name: 'downstream', strategies: retry === undefined ? [] : [retry] }),
      downstream: {
        servers: 10,
        serviceTime: SERVICE,
        errorRate: steps([0, 0], [outage[0], 1], [outage[1], 0]),
        errorLatency: 2,
      },
      load: { rate: 300 },
      duration: d,
      seed: scale.seed,
    });
    // Skip the first second of each phase: calls straddling the edge mix both regimes.
    const during = summarize(r, outage[0] + 1000, outage[1]);
    const after = summarize(r, outage[1] + 1000, d);
    const ts = timeSeries(r);
    return {
      name,
      amplification: during.amplification,
      healthyAmplification: after.amplification,
      successAfter: after.succeeded / after.requests,
      series: { t: ts.t, attempts: ts.downstreamAttempts },
    };
  };
  const variants = [
    await run('no retry', undefined),
    await run(
      'retry ×4 (plain)',
      new RetryStrategy({ maxAttempts: 4, retryOn: ['infrastructure'], backoff }),
    ),
    await run(
      `retry ×4 + RetryBudget(${RATIO})`,
      new RetryStrategy({
        maxAttempts: 4,
        retryOn: ['infrastructure'],
        backoff,
        budget: new RetryBudget({ ratio: RATIO }),
      }),
    ),
  ];
  const budgeted = variants[2]!;
  const plain = variants[1]!;
  const checks: Check[] = [
    {
      name: 'amplification with a retry budget',
      target: `≤ 1 + ratio = ${1 + RATIO}`,
      achieved: `${budgeted.amplification.toFixed(3)} (plain retry: ${plain.amplification.toFixed(2)})`,
      met: budgeted.amplification <= 1 + RATIO,
      measures: [{ label: '', value: budgeted.amplification, better: 'lower', unit: 'plain3' }],
    },
  ];
  const offered = variants[0]!;
  return {
    id: 'retry-storm',
    title: '7. Retry storm during an outage: plain retry vs RetryBudget',
    metrics: { outage, ratio: RATIO, variants },
    simulations: variants.length,
    checks,
    charts: [
      {
        file: 'retry-storm-load.svg',
        alt: 'Requests per second reaching the downstream during the outage',
        svg: renderLineChart({
          title: 'Load on the downstream (attempts / s)',
          subtitle: `outage from ${outage[0] / 1000} s to ${outage[1] / 1000} s; clients send 300 req/s`,
          xName: 'time (s)',
          yName: 'attempts / s',
          series: variants.map((v) => ({
            name: v.name,
            data: v.series.t.map((t, i): [number, number] => [t, v.series.attempts[i]!]),
            ...(v === offered ? { dashed: true } : {}),
          })),
          markers: [
            { x: outage[0] / 1000, label: 'outage' },
            { x: outage[1] / 1000, label: 'recovered' },
          ],
        }),
      },
    ],
    markdown: [
      `Downstream: 10 servers, ${SERVICE.label}; from ${secs(outage[0])} to ${secs(outage[1])} every request is refused ` +
        `(503 after 2 ms). Clients: Poisson at 300 req/s (≈ 60% of capacity). Retry: 4 attempts on \`infrastructure\`, ` +
        `decorrelated-jitter backoff from 10 ms to 200 ms; the budget variant adds \`RetryBudget({ ratio: ${RATIO} })\`. ` +
        `Amplification = downstream attempts made for the client requests that arrived in the phase, per request ` +
        `(the first second of each phase is skipped: calls straddling the edge mix both regimes).`,
      '',
      table(
        ['client', 'amplification in outage', 'amplification when healthy', 'success after recovery'],
        variants.map((v) => [
          v.name,
          `${v.amplification.toFixed(3)}×`,
          `${v.healthyAmplification.toFixed(3)}×`,
          pct(v.successAfter),
        ]),
      ),
      '',
      CHECKS_PLACEHOLDER,
      '',
      `Plain retry quadruples the load on the dependency for the whole outage; the budget lets through one retry ` +
        `per ${1 / RATIO} calls, so the dependency sees ${pct(budgeted.amplification - 1)} extra, and nothing changes ` +
        `while it is healthy.`,
    ].join('\n'),
  };
}
