import { EXCEPTION_KINDS } from '../errors/resilience-error';
import type { ExceptionKind } from '../errors/resilience-error';
import type { Fallback } from '../resilience-types';
import { OptionsValidator } from '../validation/options-validator';

export interface FallbackOptions<T> {
  /** Produces the substitute result from the final error and the call's context. */
  fallback: Fallback<T>;
  /** Kinds the fallback handles; every kind when omitted. */
  on?: readonly ExceptionKind[];
}

export interface ResolvedFallbackOptions<T> {
  readonly fallback: Fallback<T>;
  /** `undefined` means every kind. */
  readonly on: readonly ExceptionKind[] | undefined;
}

/** The options `fallback` takes (a JSON spec's keys for it too); any other key is a violation. @internal */
export const FALLBACK_OPTION_KEYS: readonly string[] = ['fallback', 'on'];

/**
 * Fallback (SPEC §4, §11.11): wraps everything, including the hedge; when the call finally fails with a kind in
 * `on`, `fallback(error, ctx)` supplies the result instead. A per-call `fallback` wins over the policy's. Not
 * expressible in a JSON policy spec (it is code).
 */
export class FallbackStrategy<T> {
  readonly type = 'fallback' as const;
  readonly options: ResolvedFallbackOptions<T>;

  constructor(options: FallbackOptions<T>) {
    const v = new OptionsValidator('FallbackStrategy');
    const o = v.options(options, FALLBACK_OPTION_KEYS, 'fallback');
    const fallback = o['fallback'];
    v.check(typeof fallback === 'function', 'fallback', 'a function', fallback);
    this.options = Object.freeze({ fallback: fallback as Fallback<T>, on: resolveOn(v, o['on']) });
    v.throwIfInvalid();
    Object.freeze(this);
  }

  /** True when this fallback handles errors of `kind`. */
  handles(kind: ExceptionKind): boolean {
    const on = this.options.on;
    return on === undefined || on.includes(kind);
  }
}

function resolveOn(v: OptionsValidator, value: unknown): readonly ExceptionKind[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.length === 0) {
    v.fail('on', 'a non-empty array of exception kinds', value);
    return undefined;
  }
  value.forEach((kind: unknown, i) => {
    if (!(EXCEPTION_KINDS as readonly unknown[]).includes(kind))
      v.fail(`on[${i}]`, 'an exception kind', kind);
  });
  return Object.freeze(value.slice() as ExceptionKind[]);
}
