import { ResilienceError } from '../errors/resilience-error';
import type { Duration } from '../strategies/types';

/**
 * Durations (SPEC §2): a number of milliseconds, or a string with a unit — `'250ms'`, `'1.5s'`, `'2m'`, `'1h'`.
 *
 * Accepted strings are a non-negative decimal (`12`, `1.5`, `.5`) immediately followed by one of `ms`, `s`, `m`,
 * `h`, with no spaces, signs or exponents. The one unit-less string accepted is `'0'` (zero in any unit); any
 * other bare number string (`'250'`) is rejected on purpose, because a config file saying `"timeout": "30"` is
 * ambiguous between seconds and milliseconds. Negative values (`-5`, `'-1s'`), NaN, ±Infinity, empty strings and
 * results that overflow to Infinity are invalid (SPEC §11.7: every duration ≥ 0). Whether 0 is acceptable for a
 * given option (`timeout > 0`) is the caller's rule, not this parser's.
 */
const DURATION_PATTERN = /^(\d+(?:\.\d+)?|\.\d+)(ms|s|m|h)$/;

const UNIT_MS: Readonly<Record<string, number>> = Object.freeze({ ms: 1, s: 1_000, m: 60_000, h: 3_600_000 });

/** The number of ms `value` denotes, or `undefined` when it is not a valid duration. Never throws (for validators). */
export function tryParseDuration(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  if (value === '0') return 0;
  const match = DURATION_PATTERN.exec(value);
  if (match === null) return undefined;
  const ms = Number(match[1]) * (UNIT_MS[match[2]!] ?? Number.NaN);
  return Number.isFinite(ms) ? ms : undefined;
}

/**
 * The number of ms `value` denotes. Throws a `configuration` {@link ResilienceError} for anything
 * {@link tryParseDuration} rejects.
 */
export function parseDuration(value: Duration): number {
  const ms = tryParseDuration(value);
  if (ms === undefined) {
    throw new ResilienceError({
      kind: 'configuration',
      message: `Invalid duration: expected a number of ms ≥ 0 or a string like '250ms', '1.5s', '2m', '1h', got ${
        typeof value === 'string' ? `'${value}'` : String(value)
      }`,
      details: { value },
    });
  }
  return ms;
}
