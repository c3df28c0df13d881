import { formatNumber } from '../charts';
import type { Check, Measure } from './scenario-types';

/** A GitHub-flavoured markdown table. Numbers are formatted with {@link formatNumber}. */
export function table(header: readonly string[], rows: readonly (readonly (string | number)[])[]): string {
  const cell = (x: string | number): string => (typeof x === 'number' ? formatNumber(x) : x);
  const lines = [
    `| ${header.join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`),
  ];
  return lines.join('\n');
}

/** The targets table every section ends with: met ✅ / missed ❌, stated plainly. */
export function checksTable(checks: readonly Check[]): string {
  return table(
    ['target', 'wanted', 'achieved', ''],
    checks.map((c) => [
      c.name,
      c.target,
      c.achieved,
      c.reportOnly === true ? 'ℹ️ reported' : c.met ? '✅ met' : '❌ **missed**',
    ]),
  );
}

/** `x` as a percentage with one decimal. */
export function pct(x: number): string {
  return `${(x * 100).toFixed(1)}%`;
}

/** Milliseconds, rounded sensibly. */
export function ms(x: number): string {
  return Number.isFinite(x) ? `${formatNumber(x)} ms` : '—';
}

/** Seconds from ms, one decimal; '—' for NaN (never settled). */
export function secs(x: number): string {
  return Number.isFinite(x) ? `${(x / 1000).toFixed(1)} s` : 'did not settle';
}

/** A {@link Measure}'s value as text. */
export function formatMeasure(m: Pick<Measure, 'label' | 'unit'>, value: number): string {
  let text: string;
  if (Number.isNaN(value)) return m.label === '' ? 'did not settle' : `${m.label.trimEnd()}: did not settle`;
  else if (m.unit === 'pct') text = pct(value);
  else if (m.unit === 'times') text = `${value.toFixed(2)}×`;
  else if (m.unit === 'secs') text = secs(value);
  else if (m.unit === 'ms') text = ms(value);
  else text = value.toFixed(Number(m.unit.slice(5)));
  return `${m.label}${text}`;
}

/** Where the report puts the targets table of a section (over every seed run); a scenario's markdown holds it. */
export const CHECKS_PLACEHOLDER = '<!-- checks -->';
