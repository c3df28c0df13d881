// What the page knows: the latest snapshot per (policy, route) and a short history of each for the charts.

/**
 * A `snapshot` event's entry as it comes over the wire: `DashboardEntry` of src/admin/dashboard/snapshot-aggregator.ts
 * in JSON (repeated here: the page is type-checked for the browser, without the server's Node types).
 */
export interface DashboardEntry {
  readonly policy: string;
  readonly route: string | null;
  readonly forcedOpen: boolean;
  /** `shadow`: decisions are reported, not enforced (SPEC §14.3). */
  readonly mode?: 'enforce' | 'shadow';
  readonly breaker?: {
    readonly state: 'closed' | 'open' | 'half_open';
    readonly failureRatio: number;
    readonly calls: number;
    readonly retryAfter?: number;
  };
  readonly concurrencyLimit?: number;
  readonly inUse?: number;
  readonly waiting?: number;
  readonly hedgeDelay?: number;
  readonly rateLimitTokens?: number;
  readonly throttleRejectionProbability?: number;
  readonly localFallback?: readonly string[];
  readonly rates: { success: number; failure: number; rejected: number; cancelled: number };
  readonly rejections: Readonly<Record<string, number>>;
  readonly shadowRejections?: Readonly<Record<string, number>>;
  readonly latency?: { p50: number; p90: number; p99: number; max: number; samples: number };
  readonly breakerHistory: readonly { from: string; to: string; ago: number }[];
}

export interface DashboardSnapshot {
  readonly interval: number;
  readonly policies: readonly string[];
  readonly entries: readonly DashboardEntry[];
}

/** How many snapshots each chart shows (two minutes at the default interval). */
export const HISTORY_POINTS = 120;

export interface Series {
  readonly t: number[];
  readonly limit: (number | null)[];
  readonly inUse: (number | null)[];
  readonly waiting: (number | null)[];
  readonly success: number[];
  readonly failure: number[];
  readonly rejected: number[];
  readonly p50: (number | null)[];
  readonly p99: (number | null)[];
}

export interface Row {
  readonly key: string;
  entry: DashboardEntry;
  readonly series: Series;
  /** Wall-clock ms of the snapshot that last updated it (breaker history is relative to it). */
  at: number;
}

export const keyOf = (policy: string, route: string | null): string => `${policy}\u0000${route ?? ''}`;

const emptySeries = (): Series => ({
  t: [],
  limit: [],
  inUse: [],
  waiting: [],
  success: [],
  failure: [],
  rejected: [],
  p50: [],
  p99: [],
});

function push<T>(list: T[], value: T): void {
  list.push(value);
  if (list.length > HISTORY_POINTS) list.shift();
}

const idleEntry = (policy: string): DashboardEntry => ({
  policy,
  route: null,
  forcedOpen: false,
  rates: { success: 0, failure: 0, rejected: 0, cancelled: 0 },
  rejections: {},
  breakerHistory: [],
});

export class Model {
  readonly rows = new Map<string, Row>();
  /** Sorted keys (policy, then route, the policy-wide entry first), rebuilt only when the set of keys changes. */
  order: string[] = [];
  policies: readonly string[] = [];

  apply(snapshot: DashboardSnapshot, now: number): void {
    this.policies = snapshot.policies;
    const seen = new Set<string>();
    let added = false;
    // A policy with no state yet (no call so far) still gets its row, so the page lists every policy.
    const listed = new Set(snapshot.entries.map((e) => e.policy));
    const idle = snapshot.policies.filter((p) => !listed.has(p)).map(idleEntry);
    for (const entry of [...snapshot.entries, ...idle]) {
      const key = keyOf(entry.policy, entry.route);
      seen.add(key);
      let row = this.rows.get(key);
      if (row === undefined) {
        row = { key, entry, series: emptySeries(), at: now };
        this.rows.set(key, row);
        added = true;
      }
      row.entry = entry;
      row.at = now;
      const s = row.series;
      push(s.t, now / 1000);
      push(s.limit, entry.concurrencyLimit ?? null);
      push(s.inUse, entry.inUse ?? null);
      push(s.waiting, entry.waiting ?? null);
      push(s.success, entry.rates.success);
      push(s.failure, entry.rates.failure);
      push(s.rejected, entry.rates.rejected);
      push(s.p50, entry.latency?.p50 ?? null);
      push(s.p99, entry.latency?.p99 ?? null);
    }
    let removed = false;
    for (const key of this.rows.keys())
      if (!seen.has(key)) {
        this.rows.delete(key);
        removed = true;
      }
    if (added || removed)
      this.order = [...this.rows.values()]
        .sort(
          (a, b) =>
            a.entry.policy.localeCompare(b.entry.policy) ||
            (a.entry.route ?? '').localeCompare(b.entry.route ?? ''),
        )
        .map((r) => r.key);
  }

  /** A breaker event between snapshots: shown at once, the next snapshot brings the rest. */
  breakerChanged(policy: string, route: string | null, to: string): Row | undefined {
    const row = this.rows.get(keyOf(policy, route));
    if (row?.entry.breaker === undefined) return row;
    row.entry = { ...row.entry, breaker: { ...row.entry.breaker, state: to as 'open' } };
    return row;
  }
}
