import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderLineChart, type LineSeries } from './charts';
import { timeSeries } from './metrics';
import type { SimulationResult } from './simulation-types';

/** Points `[seconds, value]` from a trajectory sampled at `t` (ms), up to `until` ms (default: all). */
export function points(
  t: readonly number[],
  v: readonly (number | null)[],
  until = Infinity,
): [number, number | null][] {
  const out: [number, number | null][] = [];
  t.forEach((x, i) => {
    if (x <= until) out.push([x / 1000, v[i] ?? null]);
  });
  return out;
}

/**
 * The charts `simulate({ charts })` writes: throughput (offered, goodput, rejected, downstream load), p50/p99
 * latency, and, when the policy has an adaptive bulkhead, each replica's concurrency limit. Returns the paths.
 */
export function writeDefaultCharts(result: SimulationResult, dir: string, name: string): string[] {
  mkdirSync(dir, { recursive: true });
  const ts = timeSeries(result);
  const xy = (v: readonly (number | null)[]): [number, number | null][] =>
    ts.t.map((x, i) => [x, v[i] ?? null]);
  const files: [string, string][] = [
    [
      `${name}-throughput.svg`,
      renderLineChart({
        title: 'Throughput',
        subtitle: `seed ${result.seed}, ${result.replicas} replica(s), SLO ${result.slo} ms`,
        xName: 'time (s)',
        yName: 'requests / s',
        series: [
          { name: 'offered', data: xy(ts.offered) },
          { name: 'goodput', data: xy(ts.goodput) },
          { name: 'rejected', data: xy(ts.rejected) },
          { name: 'downstream attempts', data: xy(ts.downstreamAttempts), dashed: true },
        ],
      }),
    ],
    [
      `${name}-latency.svg`,
      renderLineChart({
        title: 'Latency of successful requests',
        xName: 'time (s)',
        yName: 'ms',
        series: [
          { name: 'p50', data: xy(ts.p50) },
          { name: 'p99', data: xy(ts.p99) },
        ],
      }),
    ],
  ];
  const limits: LineSeries[] = result.samples.replicas
    .map((r, i) => ({
      name: `replica ${i} limit`,
      data: points(result.samples.t, r.limit, result.duration),
      step: true,
    }))
    .filter((s) => s.data.some(([, y]) => y !== null));
  if (limits.length > 0) {
    files.push([
      `${name}-limit.svg`,
      renderLineChart({ title: 'Concurrency limit', xName: 'time (s)', yName: 'limit', series: limits }),
    ]);
  }
  return files.map(([file, svg]) => {
    const path = join(dir, file);
    writeFileSync(path, svg);
    return path;
  });
}
