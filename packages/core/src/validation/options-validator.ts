import { ErrorCode, ResilienceError, isResilienceError } from '../errors/resilience-error';
import { tryParseDuration } from '../time/duration';

/**
 * Options validation (SPEC §2, aesthetics §8.4): every rule is checked, every violation is kept, and one
 * `configuration` / `invalid_policy` {@link ResilienceError} reports them all — each naming the field path, the
 * constraint and the value given — so a user fixes a config file in one pass instead of one error at a time
 * (Polly `ValidationHelper`, cockatiel's `RangeError` messages).
 *
 * Typed helpers (`number`, `duration`, …) return the resolved value, or a harmless placeholder when the value is
 * invalid: the caller finishes resolving, then {@link OptionsValidator.throwIfInvalid} throws before anything is
 * built from the placeholders.
 */

/** One broken rule: `path` (e.g. `strategies[2].failureRatio`), the constraint it breaks, and the value given. */
export interface Violation {
  readonly path: string;
  readonly constraint: string;
  readonly value: unknown;
}

/** A numeric range; bounds are inclusive unless marked exclusive. */
export interface NumberRule {
  readonly integer?: boolean;
  readonly min?: number;
  readonly minExclusive?: boolean;
  readonly max?: number;
  readonly maxExclusive?: boolean;
}

/** Common ranges, named after the SPEC §11.7 constraints that use them. */
export const Rules = Object.freeze({
  /** (0, 1] — failureRatio, smoothing, retry budget ratio. */
  RATIO: Object.freeze({ min: 0, minExclusive: true, max: 1 }),
  /** (0, 1) — quantiles, backoffRatio. */
  OPEN_UNIT: Object.freeze({ min: 0, minExclusive: true, max: 1, maxExclusive: true }),
  POSITIVE: Object.freeze({ min: 0, minExclusive: true }),
  NON_NEGATIVE: Object.freeze({ min: 0 }),
  AT_LEAST_ONE: Object.freeze({ min: 1 }),
  COUNT_AT_LEAST_ONE: Object.freeze({ integer: true, min: 1 }),
  COUNT: Object.freeze({ integer: true, min: 0 }),
} satisfies Record<string, NumberRule>);

/** Renders a rule as the words after "must be": `in (0, 1]`, `an integer ≥ 1`, `> 0`. */
export function describeRule(rule: NumberRule): string {
  const { min, max } = rule;
  if (min !== undefined && max !== undefined) {
    const range = `${rule.minExclusive === true ? '(' : '['}${min}, ${max}${rule.maxExclusive === true ? ')' : ']'}`;
    return rule.integer === true ? `an integer in ${range}` : `in ${range}`;
  }
  const bound =
    min !== undefined
      ? `${rule.minExclusive === true ? '>' : '≥'} ${min}`
      : max !== undefined
        ? `${rule.maxExclusive === true ? '<' : '≤'} ${max}`
        : '';
  if (rule.integer === true) return bound === '' ? 'an integer' : `an integer ${bound}`;
  return bound === '' ? 'a finite number' : bound;
}

/** True when `value` is a finite number satisfying `rule`. */
export function satisfies(value: unknown, rule: NumberRule): value is number {
  if (typeof value !== 'number' || !Number.isFinite(value)) return false;
  if (rule.integer === true && !Number.isInteger(value)) return false;
  if (rule.min !== undefined && (rule.minExclusive === true ? value <= rule.min : value < rule.min))
    return false;
  if (rule.max !== undefined && (rule.maxExclusive === true ? value >= rule.max : value > rule.max))
    return false;
  return true;
}

/** A short, log-safe rendering of a given value: strings single-quoted, arrays and objects abbreviated. */
export function formatValue(value: unknown, depth = 0): string {
  switch (typeof value) {
    case 'string':
      return `'${value.length > 60 ? `${value.slice(0, 57)}...` : value}'`;
    case 'number':
    case 'boolean':
    case 'undefined':
    case 'bigint':
      return String(value);
    case 'function':
      return 'a function';
    case 'symbol':
      return value.toString();
    default:
      break;
  }
  if (value === null) return 'null';
  if (depth > 1) return Array.isArray(value) ? '[…]' : '{…}';
  if (Array.isArray(value)) {
    const items = value.slice(0, 5).map((v) => formatValue(v, depth + 1));
    return `[${items.join(', ')}${value.length > 5 ? ', …' : ''}]`;
  }
  const name = (value as object).constructor?.name;
  if (name !== undefined && name !== 'Object') return `${/^[AEIOU]/.test(name) ? 'an' : 'a'} ${name}`;
  const entries = Object.entries(value as object);
  if (entries.length === 0) return '{}';
  const shown = entries.slice(0, 5).map(([k, v]) => `${k}: ${formatValue(v, depth + 1)}`);
  return `{ ${shown.join(', ')}${entries.length > 5 ? ', …' : ''} }`;
}

/** Joins a path prefix and a field: `('strategies[2]', 'failureRatio')` → `strategies[2].failureRatio`. */
export function joinPath(prefix: string, path: string): string {
  if (prefix === '') return path;
  if (path === '') return prefix;
  return path.startsWith('[') ? `${prefix}${path}` : `${prefix}.${path}`;
}

/** The violations carried by an `invalid_policy` error, or `undefined` for any other error. */
export function violationsOf(error: unknown): readonly Violation[] | undefined {
  if (!isResilienceError(error) || error.code !== ErrorCode.INVALID_POLICY) return undefined;
  const violations = error.details?.['violations'];
  return Array.isArray(violations) ? (violations as Violation[]) : undefined;
}

export interface OptionsValidatorInit {
  /** Prepended to every path (e.g. `strategies[2]`). */
  readonly prefix?: string;
  /** The error message's heading; default `Invalid <subject> options`. */
  readonly heading?: string;
  /** Set on the thrown error's `policy`. */
  readonly policy?: string;
}

export class OptionsValidator {
  readonly #heading: string;
  readonly #prefix: string;
  readonly #policy: string | undefined;
  readonly #violations: Violation[] = [];

  /** `subject` names what is being validated, e.g. `CircuitBreakerStrategy`. */
  constructor(subject: string, init: OptionsValidatorInit = {}) {
    this.#heading = init.heading ?? `Invalid ${subject} options`;
    this.#prefix = init.prefix ?? '';
    this.#policy = init.policy;
  }

  get violations(): readonly Violation[] {
    return this.#violations;
  }

  get ok(): boolean {
    return this.#violations.length === 0;
  }

  /** Records a violation at `path` (relative to the prefix). */
  fail(path: string, constraint: string, value: unknown): void {
    this.#violations.push(Object.freeze({ path: joinPath(this.#prefix, path), constraint, value }));
  }

  /** Records a violation unless `ok`; returns `ok`. */
  check(ok: boolean, path: string, constraint: string, value: unknown): boolean {
    if (!ok) this.fail(path, constraint, value);
    return ok;
  }

  /** Adopts violations found elsewhere (a nested options object), their paths placed under `path`. */
  adopt(violations: readonly Violation[], path = ''): void {
    for (const v of violations) this.fail(joinPath(path, v.path), v.constraint, v.value);
  }

  /**
   * Runs `build`; if it throws an `invalid_policy` error, adopts its violations under `path` and returns
   * `undefined`. Any other error propagates.
   */
  nested<T>(path: string, build: () => T): T | undefined {
    try {
      return build();
    } catch (error) {
      const violations = violationsOf(error);
      if (violations === undefined) throw error;
      this.adopt(violations, path);
      return undefined;
    }
  }

  /** `value` as a record of options; a violation (and `{}`) when it is not a plain object. */
  object(path: string, value: unknown): Readonly<Record<string, unknown>> {
    const ok = typeof value === 'object' && value !== null && !Array.isArray(value);
    this.check(ok, path === '' ? 'options' : path, 'an object', value);
    return ok ? (value as Record<string, unknown>) : {};
  }

  /**
   * A strategy's options object: like {@link object}, and every own key that is not one of `known` is a violation
   * (`<key> must be a known <label> option (…)`). A misspelled option (`halfOpenMaxcalls`) would otherwise be
   * silently ignored and its default used — in code as in a JSON spec, whose wording this is. Keys in
   * `checkedElsewhere` are the caller's to check (a policy's own fields, carried by `{ ...policy }`).
   */
  options(
    value: unknown,
    known: readonly string[],
    label: string,
    checkedElsewhere: readonly string[] = [],
  ): Readonly<Record<string, unknown>> {
    const o = this.object('', value);
    for (const key of Object.keys(o))
      if (!known.includes(key) && !checkedElsewhere.includes(key))
        this.fail(key, `a known ${label} option (${known.join(', ')})`, o[key]);
    return o;
  }

  /** A required number within `rule`. */
  number(path: string, value: unknown, rule: NumberRule): number {
    return this.check(satisfies(value, rule), path, describeRule(rule), value)
      ? (value as number)
      : Number.NaN;
  }

  /** An optional number within `rule`; `fallback` when undefined. */
  optionalNumber(path: string, value: unknown, rule: NumberRule, fallback: number): number;
  optionalNumber(path: string, value: unknown, rule: NumberRule): number | undefined;
  optionalNumber(path: string, value: unknown, rule: NumberRule, fallback?: number): number | undefined {
    return value === undefined ? fallback : this.number(path, value, rule);
  }

  /** A required duration in ms; `positive` demands > 0 (otherwise ≥ 0). */
  duration(path: string, value: unknown, positive: boolean): number {
    const ms = tryParseDuration(value);
    const ok = ms !== undefined && (!positive || ms > 0);
    this.check(ok, path, positive ? 'a duration > 0' : 'a duration ≥ 0', value);
    return ok ? ms : Number.NaN;
  }

  optionalDuration(path: string, value: unknown, positive: boolean, fallback: number): number;
  optionalDuration(path: string, value: unknown, positive: boolean): number | undefined;
  optionalDuration(path: string, value: unknown, positive: boolean, fallback?: number): number | undefined {
    return value === undefined ? fallback : this.duration(path, value, positive);
  }

  boolean(path: string, value: unknown, fallback: boolean): boolean {
    if (value === undefined) return fallback;
    return this.check(typeof value === 'boolean', path, 'a boolean', value) ? (value as boolean) : fallback;
  }

  /** One of `allowed`; `fallback` when undefined. */
  oneOf<T extends string>(path: string, value: unknown, allowed: readonly T[], fallback: T): T {
    if (value === undefined) return fallback;
    const ok = typeof value === 'string' && (allowed as readonly string[]).includes(value);
    this.check(ok, path, `one of ${allowed.map((a) => `'${a}'`).join(', ')}`, value);
    return ok ? (value as T) : fallback;
  }

  /** Throws the one configuration error describing every violation, if any. */
  throwIfInvalid(): void {
    if (this.#violations.length === 0) return;
    const violations = Object.freeze(this.#violations.slice());
    const parts = violations.map((v) => `${v.path} must be ${v.constraint}, got ${formatValue(v.value)}`);
    throw new ResilienceError({
      kind: 'configuration',
      code: ErrorCode.INVALID_POLICY,
      message: `${this.#heading}: ${parts.join('; ')}`,
      details: Object.freeze({ violations }),
      ...(this.#policy === undefined ? {} : { policy: this.#policy }),
    });
  }
}
