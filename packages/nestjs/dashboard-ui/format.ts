import type { DashboardEntry } from './model';

/** The state the page names (never a colour alone): forced open wins over the breaker's own state. */
export function stateName(e: DashboardEntry): string {
  if (e.forcedOpen) return 'forced open';
  return e.breaker === undefined ? 'no breaker' : breakerWord(e.breaker.state);
}

/** Core's `half_open` as people write it. */
export const breakerWord = (state: string): string => state.replace('_', '-');

/** A CSS class per state, for the colour that comes on top of the name. */
export const stateClass = (e: DashboardEntry): string => `state-${stateName(e).replace(/ /g, '-')}`;

export function rate(n: number): string {
  return n === 0 ? '0' : n < 10 ? n.toFixed(1) : Math.round(n).toLocaleString('en');
}

export function ms(n: number | undefined): string {
  if (n === undefined) return '–';
  return n < 1000 ? `${Math.round(n)} ms` : `${(n / 1000).toFixed(1)} s`;
}

export function ago(msAgo: number): string {
  const s = Math.round(msAgo / 1000);
  return s < 60 ? `${s}s ago` : s < 3600 ? `${Math.floor(s / 60)}m ago` : `${Math.floor(s / 3600)}h ago`;
}

export const routeLabel = (route: string | null): string => route ?? '(policy-wide)';

export function callsText(e: DashboardEntry): string {
  const r = e.rates;
  return `ok ${rate(r.success)} · fail ${rate(r.failure)} · rej ${rate(r.rejected)}${r.cancelled > 0 ? ` · cancel ${rate(r.cancelled)}` : ''}`;
}

export function rejectionsText(e: DashboardEntry): string {
  const codes = Object.entries(e.rejections).map(([code, n]) => `${code} ${rate(n)}`);
  // Shadow mode: what the policy would have refused (its calls ran), so the rollout can be judged before enforcing.
  const would = Object.entries(e.shadowRejections ?? {}).map(([code, n]) => `${code} ${rate(n)}`);
  if (e.mode === 'shadow')
    codes.push(`shadow: would reject ${would.length === 0 ? 'none' : would.join(', ')}`);
  return codes.length === 0 ? '–' : codes.join(', ');
}

export function bulkheadText(e: DashboardEntry): string {
  if (e.concurrencyLimit === undefined) return '–';
  return `${e.inUse ?? 0}/${e.concurrencyLimit} in use · ${e.waiting ?? 0} queued`;
}

export function latencyText(e: DashboardEntry): string {
  const l = e.latency;
  return l === undefined ? '–' : `p50 ${ms(l.p50)} · p90 ${ms(l.p90)} · p99 ${ms(l.p99)}`;
}

export function tokensText(e: DashboardEntry): string {
  return e.rateLimitTokens === undefined ? '–' : (Math.floor(e.rateLimitTokens * 10) / 10).toString();
}

/** The breaker's recent transitions, oldest first, as short state names. */
export function historyText(e: DashboardEntry): string {
  return e.breakerHistory.map((c) => `${breakerWord(c.to)} ${ago(c.ago)}`).join(' → ');
}
