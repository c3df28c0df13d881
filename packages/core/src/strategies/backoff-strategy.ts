import { OptionsValidator, Rules } from '../validation/options-validator';
import type { BackoffOptions, JitterMode, ResolvedBackoffOptions } from './types';

export const JITTER_MODES: readonly JitterMode[] = Object.freeze(['none', 'full', 'equal', 'decorrelated']);

/** The options `backoff` takes (a JSON spec's keys for it too); any other key is a violation. @internal */
export const BACKOFF_OPTION_KEYS: readonly string[] = ['base', 'max', 'multiplier', 'jitter'];

/**
 * Exponential backoff with jitter (SPEC §4), after Marc Brooker, "Exponential Backoff And Jitter", AWS
 * Architecture Blog, 2015 (https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/).
 *
 * The un-jittered delay of retry `n` (1 for the first retry) is `exp = min(max, base·multiplier^(n−1))`.
 * - `none`: `exp`.
 * - `full`: `random·exp` — the blog's best spread of contending clients.
 * - `equal`: `exp/2 + random·exp/2` — never shorter than half the exponential delay.
 * - `decorrelated` (default): `min(max, base + random·(max(base, previous)·(multiplier+1) − base))` — the blog's
 *   "decorrelated jitter" (`sleep = min(cap, random_between(base, sleep·3))`) with its growth factor 3 generalised
 *   to `multiplier + 1`; it depends on the previous delay rather than the retry number.
 *
 * Pure: randomness is an argument (the `Resilience`'s injected `random`), so delays are reproducible in tests.
 */
export class BackoffStrategy {
  readonly options: ResolvedBackoffOptions;

  constructor(options: BackoffOptions) {
    const v = new OptionsValidator('BackoffStrategy');
    const o = v.options(options, BACKOFF_OPTION_KEYS, 'backoff');
    const base = v.duration('base', o['base'], true);
    const max = v.duration('max', o['max'], false);
    if (Number.isFinite(base) && Number.isFinite(max) && max < base)
      v.fail('max', `≥ base (${base} ms)`, o['max']);
    this.options = Object.freeze({
      base,
      max,
      multiplier: v.optionalNumber('multiplier', o['multiplier'], Rules.AT_LEAST_ONE, 2),
      jitter: v.oneOf('jitter', o['jitter'], JITTER_MODES, 'decorrelated'),
    });
    v.throwIfInvalid();
    Object.freeze(this);
  }

  /**
   * The delay (ms) before retry number `retry` (1 for the first retry), given the previous delay (0 before the
   * first) and a source of randomness in [0, 1). Always finite, ≥ 0 and ≤ `max`.
   */
  delay(retry: number, previousDelay: number, random: () => number): number {
    const { base, max, multiplier, jitter } = this.options;
    if (jitter === 'decorrelated') {
      const previous = previousDelay > 0 ? Math.min(previousDelay, max) : 0;
      const upper = Math.max(base, previous) * (multiplier + 1);
      return Math.min(max, base + unit(random()) * (upper - base));
    }
    const exponent = retry > 1 ? retry - 1 : 0;
    const exp = Math.min(max, base * multiplier ** exponent);
    if (jitter === 'none') return exp;
    if (jitter === 'full') return unit(random()) * exp;
    return exp / 2 + (unit(random()) * exp) / 2;
  }
}

/** Clamps a random draw into [0, 1] (NaN → 0), so a faulty `random` can never produce a negative or NaN delay. */
function unit(r: number): number {
  return r > 0 ? (r < 1 ? r : 1) : 0;
}
