import type { DownstreamCounters } from './downstream';
import { RequestLog } from './request-log';
import type { SimulationResult } from './simulation-types';
import { percentiles, quantileSorted, type Percentiles } from './stats';

/** Metrics of the requests that arrived in `[from, to)` and of the downstream over the same interval. */
export interface Summary {
  readonly from: number;
  readonly to: number;
  readonly requests: number;
  readonly succeeded: number;
  /** Successes within the SLO. */
  readonly goodput: number;
  /** Goodput per second of the window. */
  readonly goodputRate: number;
  /** Rejections raised by Ballast (admission refusals), by code. */
  readonly rejected: Readonly<Record<string, number>>;
  readonly rejectedTotal: number;
  /** Failures (downstream errors, timeouts, deadline), by code. */
  readonly failed: Readonly<Record<string, number>>;
  readonly failedTotal: number;
  readonly unfinished: number;
  /** Latency of successful requests, from arrival to response. */
  readonly latency: Percentiles;
  /** Client-side wait (bulkhead queue) of requests whose first attempt started: its start − arrival. */
  readonly queueWait: Percentiles;
  /** Per criticality 0..3 (BEST_EFFORT … CRITICAL). */
  readonly byCriticality: {
    readonly requests: number[];
    readonly succeeded: number[];
    readonly rejected: number[];
    /** Rejections by the bulkhead (full or CoDel-shed): load shedding proper. */
    readonly shed: number[];
    /** Longest client-side wait of a request that got to start. */
    readonly maxQueueWait: number[];
  };
  /** Per replica: requests received, admitted (not rejected by Ballast), succeeded. */
  readonly perReplica: { readonly requests: number; readonly admitted: number; readonly succeeded: number }[];
  /** Downstream work in the window: attempts include retries and hedges. */
  readonly downstream: DownstreamCounters;
  /** Downstream attempts made for these requests, per request (load amplification: 1 = none). */
  readonly amplification: number;
}

const SHED_CODES = new Set([
  'rejected:bulkhead_full',
  'rejected:bulkhead_queue_shed',
  'rejected:bulkhead_queue_timeout',
]);

/** The sample index in effect at time `t` (the last sample at or before it). */
export function sampleIndexAt(result: SimulationResult, t: number): number {
  const ts = result.samples.t;
  let lo = 0;
  let hi = ts.length - 1;
  if (hi < 0) return -1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (ts[mid]! <= t) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

function counterDelta(result: SimulationResult, from: number, to: number): DownstreamCounters {
  const d = result.samples.downstream;
  const a = d[sampleIndexAt(result, from)];
  const b = d[sampleIndexAt(result, to)];
  if (a === undefined || b === undefined) {
    return { attempts: 0, successes: 0, failures: 0, refused: 0, abandoned: 0, busyTime: 0 };
  }
  return {
    attempts: b.attempts - a.attempts,
    successes: b.successes - a.successes,
    failures: b.failures - a.failures,
    refused: b.refused - a.refused,
    abandoned: b.abandoned - a.abandoned,
    busyTime: b.busyTime - a.busyTime,
  };
}

/** Summarizes the requests that arrived in `[from, to)` (default: the whole run). */
export function summarize(result: SimulationResult, from = 0, to = result.duration): Summary {
  const log = result.log;
  const labels = log.labels;
  const lat: number[] = [];
  const rejected: Record<string, number> = {};
  const failed: Record<string, number> = {};
  const z = (): number[] => [0, 0, 0, 0];
  const byCriticality = { requests: z(), succeeded: z(), rejected: z(), shed: z(), maxQueueWait: z() };
  const waits: number[] = [];
  const perReplica = Array.from({ length: result.replicas }, () => ({
    requests: 0,
    admitted: 0,
    succeeded: 0,
  }));
  let requests = 0;
  let succeeded = 0;
  let goodput = 0;
  let unfinished = 0;
  let rejectedTotal = 0;
  let attempts = 0;
  let failedTotal = 0;
  for (let i = 0; i < log.length; i++) {
    const at = log.arrival[i]!;
    if (at < from || at >= to) continue;
    requests++;
    attempts += log.attempts[i]!;
    const c = log.criticality[i]!;
    const rep = perReplica[log.replica[i]!]!;
    byCriticality.requests[c]!++;
    rep.requests++;
    const adm = log.admitted[i]!;
    if (!Number.isNaN(adm)) {
      const w = adm - at;
      waits.push(w);
      if (w > byCriticality.maxQueueWait[c]!) byCriticality.maxQueueWait[c] = w;
    }
    const o = log.outcome[i]!;
    if (o === RequestLog.SUCCESS) {
      const l = log.end[i]! - at;
      lat.push(l);
      succeeded++;
      if (l <= result.slo) goodput++;
      byCriticality.succeeded[c]!++;
      rep.admitted++;
      rep.succeeded++;
      continue;
    }
    if (o === RequestLog.UNFINISHED) {
      unfinished++;
      rep.admitted++;
      continue;
    }
    const label = labels[o]!;
    const colon = label.indexOf(':');
    const code = label.slice(colon + 1);
    if (label.startsWith('rejected:')) {
      rejected[code] = (rejected[code] ?? 0) + 1;
      rejectedTotal++;
      byCriticality.rejected[c]!++;
      if (SHED_CODES.has(label)) byCriticality.shed[c]!++;
    } else {
      failed[code] = (failed[code] ?? 0) + 1;
      failedTotal++;
      rep.admitted++;
    }
  }
  const downstream = counterDelta(result, from, to);
  return {
    from,
    to,
    requests,
    succeeded,
    goodput,
    goodputRate: (goodput * 1000) / (to - from),
    rejected,
    rejectedTotal,
    failed,
    failedTotal,
    unfinished,
    latency: percentiles(lat),
    queueWait: percentiles(waits),
    byCriticality,
    perReplica,
    downstream,
    amplification: requests === 0 ? NaN : attempts / requests,
  };
}

/** Per-bucket rates (per second) over the run, for charts. */
export interface TimeSeries {
  /** Bucket start, seconds. */
  readonly t: number[];
  readonly offered: number[];
  readonly succeeded: number[];
  readonly goodput: number[];
  readonly rejected: number[];
  readonly failed: number[];
  /** p99 latency (ms) of successes completing in the bucket; null when none. */
  readonly p99: (number | null)[];
  readonly p50: (number | null)[];
  readonly downstreamAttempts: number[];
  readonly downstreamSuccesses: number[];
}

/** Buckets the run into `bucket`-ms intervals: arrivals by arrival time, outcomes by completion time. */
export function timeSeries(result: SimulationResult, bucket = 1000): TimeSeries {
  const n = Math.ceil(result.duration / bucket);
  const z = (): number[] => new Array<number>(n).fill(0);
  const offered = z();
  const succeeded = z();
  const goodput = z();
  const rejected = z();
  const failed = z();
  const lat: number[][] = Array.from({ length: n }, () => []);
  const log = result.log;
  for (let i = 0; i < log.length; i++) {
    const a = Math.floor(log.arrival[i]! / bucket);
    if (a < n) offered[a]!++;
    const end = log.end[i]!;
    const b = Math.floor(end / bucket);
    if (!(b >= 0 && b < n)) continue;
    const o = log.outcome[i]!;
    if (o === RequestLog.SUCCESS) {
      succeeded[b]!++;
      const l = end - log.arrival[i]!;
      if (l <= result.slo) goodput[b]!++;
      lat[b]!.push(l);
    } else if (log.labels[o]!.startsWith('rejected:')) rejected[b]!++;
    else if (o !== RequestLog.UNFINISHED) failed[b]!++;
  }
  const perSecond = (xs: number[]): number[] => xs.map((x) => (x * 1000) / bucket);
  const q = (p: number) => (xs: number[]) =>
    xs.length === 0
      ? null
      : quantileSorted(
          xs.sort((x, y) => x - y),
          p,
        );
  const downstreamAttempts: number[] = [];
  const downstreamSuccesses: number[] = [];
  for (let k = 0; k < n; k++) {
    const d = counterDelta(result, k * bucket, (k + 1) * bucket);
    downstreamAttempts.push((d.attempts * 1000) / bucket);
    downstreamSuccesses.push((d.successes * 1000) / bucket);
  }
  return {
    t: Array.from({ length: n }, (_, k) => (k * bucket) / 1000),
    offered: perSecond(offered),
    succeeded: perSecond(succeeded),
    goodput: perSecond(goodput),
    rejected: perSecond(rejected),
    failed: perSecond(failed),
    p99: lat.map(q(0.99)),
    p50: lat.map(q(0.5)),
    downstreamAttempts,
    downstreamSuccesses,
  };
}
