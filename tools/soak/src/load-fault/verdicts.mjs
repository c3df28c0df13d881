// The load-and-fault run's checks, as functions of what was recorded (the edge's per-second answers, the client's
// errors, the replicas' heap samples, the breaker states polled): the main run and the canaries use the same ones.

/** Bounds the checks hold the run to (stated in RELIABILITY.md). */
export const BOUNDS = Object.freeze({
  /** A request not answered within this many seconds is a hang (autocannon's timeout). */
  hangSeconds: 10,
  /** Converged: accepted rate of the fleet rate limit within ± this fraction of its configured rate… */
  rateTolerance: 0.1,
  /** …over this many consecutive whole seconds after the heal (the same window for the breaker). */
  windowSeconds: 3,
  /** A fault must converge within this many seconds of its heal. */
  convergeSeconds: 45,
  /** Breaker converged also needs this many stock reads answered per second (no vacuous window). */
  minSkuPerSecond: 10,
  /** Heap flat: median of the last 4 samples (after GC) minus the median of the first 4 after warm-up, at most. */
  heapGrowthBytes: 8 * 2 ** 20,
  /** Heap samples taken in a replica's first seconds (start-up, JIT, first connections) are not compared. */
  heapWarmupSeconds: 30,
});

const REFUSED_BY_BREAKER = ['circuit_open', 'resilience_forced_open'];

/** The whole seconds [from, to) of the timeline, merged per endpoint. */
export function windowOf(timeline, from, to) {
  const merged = {};
  for (let s = Math.ceil(from); s < to; s++)
    for (const [endpoint, e] of Object.entries(timeline.get(s)?.endpoints ?? {})) {
      const m = (merged[endpoint] ??= { outcomes: {}, latencies: [], unexpected: [] });
      for (const [k, v] of Object.entries(e.outcomes)) m.outcomes[k] = (m.outcomes[k] ?? 0) + v;
      for (const x of e.latencies) m.latencies.push(x);
      m.unexpected.push(...e.unexpected);
    }
  return merged;
}

export const total = (e) => Object.values(e?.outcomes ?? {}).reduce((a, b) => a + b, 0);

export function quantile(values, q) {
  if (values.length === 0) return undefined;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/** p99 of every answer in [from, to), all endpoints. */
export function p99(timeline, from, to) {
  return quantile(
    Object.values(windowOf(timeline, from, to)).flatMap((e) => e.latencies),
    0.99,
  );
}

/** What must never happen, in [from, to): hangs, client socket errors and answers that are not allowed. */
export function failures(timeline, clientErrors, from, to, t0) {
  const out = [];
  for (const e of clientErrors) {
    const at = (e.at - t0) / 1000;
    if (at < from || at >= to) continue;
    out.push(
      e.message === 'request timed out'
        ? `hang: a request not answered within ${BOUNDS.hangSeconds} s (at ${at.toFixed(1)} s)`
        : String(e.code).startsWith('status')
          ? `unexpected answer at the client: ${e.code} (at ${at.toFixed(1)} s)`
          : `socket error at the client: ${e.code ?? e.message} (at ${at.toFixed(1)} s)`,
    );
  }
  for (const [endpoint, e] of Object.entries(windowOf(timeline, from, to)))
    if (e.outcomes.unexpected > 0)
      out.push(
        `${e.outcomes.unexpected} unexpected answer(s) on ${endpoint}, e.g. ${e.unexpected.slice(0, 2).join(' / ')}`,
      );
  return out;
}

/**
 * Whether the whole seconds [s, s + window) show the fleet converged: the rate limit's accepted rate within the
 * tolerance of `rate` (with at least 1.5× that many asking, or the limit was not what bound it), and the breaker
 * closed — no breaker refusal, enough stock reads answered, and every polled replica `closed`, not forced open.
 */
export function convergedAt(timeline, s, { rate, states }) {
  const w = windowOf(timeline, s, s + BOUNDS.windowSeconds);
  const n = BOUNDS.windowSeconds;
  const accepted = w.list?.outcomes.ok ?? 0;
  const rateOk =
    total(w.list) >= 1.5 * rate * n && Math.abs(accepted - rate * n) <= BOUNDS.rateTolerance * rate * n;
  const refused = REFUSED_BY_BREAKER.reduce((a, k) => a + (w.sku?.outcomes[k] ?? 0), 0);
  const polled = states.filter((p) => p.at >= s && p.at < s + n);
  const breakerOk =
    refused === 0 &&
    total(w.sku) >= BOUNDS.minSkuPerSecond * n &&
    polled.length > 0 &&
    polled.every((p) => p.closed);
  return { rateOk, breakerOk, accepted: accepted / n };
}

/** Seconds from `healAt` to the first converged window (rate limit and breaker apart), or undefined. */
export function convergence(timeline, healAt, until, context) {
  const out = { rate: undefined, breaker: undefined };
  for (let s = Math.ceil(healAt); s + BOUNDS.windowSeconds <= until; s++) {
    const c = convergedAt(timeline, s, context);
    if (out.rate === undefined && c.rateOk) out.rate = s - healAt;
    if (out.breaker === undefined && c.breakerOk) out.breaker = s - healAt;
    if (out.rate !== undefined && out.breaker !== undefined) break;
  }
  return out;
}

/** Heap growth of one replica process: samples [{ at (s since its start), bytes }]. */
export function heapGrowth(samples, warmupSeconds = BOUNDS.heapWarmupSeconds) {
  const kept = samples.filter((x) => x.at >= warmupSeconds).map((x) => x.bytes);
  if (kept.length < 2) return undefined;
  const k = Math.min(4, Math.floor(kept.length / 2));
  const median = (xs) => quantile(xs, 0.5);
  return {
    first: median(kept.slice(0, k)),
    last: median(kept.slice(-k)),
    samples: kept.length,
    growth: median(kept.slice(-k)) - median(kept.slice(0, k)),
  };
}

export function heapProblems(name, samples, warmupSeconds) {
  const g = heapGrowth(samples, warmupSeconds);
  if (g === undefined || g.growth <= BOUNDS.heapGrowthBytes) return [];
  const mib = (b) => (b / 2 ** 20).toFixed(1);
  return [
    `heap of ${name} grew ${mib(g.growth)} MiB (${mib(g.first)} → ${mib(g.last)} MiB after GC), more than ${mib(BOUNDS.heapGrowthBytes)} MiB`,
  ];
}
