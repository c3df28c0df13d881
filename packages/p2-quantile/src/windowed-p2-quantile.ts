import { OptionProblems, isOpenUnit } from './option-checks';
import { P2Quantile, type P2QuantileJSON } from './p2-quantile';

/** Options of {@link WindowedP2Quantile}. @public */
export interface WindowedP2QuantileOptions {
  /** Samples per rotation; an integer ≥ 5 (default 512). */
  readonly window?: number | undefined;
}

/** Resolved, frozen options of a {@link WindowedP2Quantile}. @public */
export interface ResolvedWindowedP2QuantileOptions {
  readonly p: number;
  readonly window: number;
}

/** Plain-data snapshot of a {@link WindowedP2Quantile}. @public */
export interface WindowedP2QuantileJSON {
  readonly p: number;
  readonly window: number;
  readonly count: number;
  readonly rotations: number;
  readonly older: P2QuantileJSON;
  readonly younger: P2QuantileJSON;
}

/** @public */
export const DEFAULT_P2_WINDOW = 512;

/**
 * A P² estimate that forgets: it follows a shifting distribution instead of averaging over all history.
 *
 * Why two estimators: a single P² never forgets, so after a latency shift it converges only as fast as the new
 * samples outnumber the old. Here two estimators are fed every sample; every `window` samples the older one is
 * replaced by the younger and a fresh younger one starts. `value()` reads the older, which therefore always
 * summarises between `window` and `2·window` recent samples (all of them during the first window), so a shift is
 * fully reflected within two windows. `reset()` opens a fresh epoch: no estimate until five samples of it.
 *
 * Memory: two P² estimators (a few hundred bytes). `add` is O(1) and allocation-free (rotation swaps and resets
 * the existing estimators).
 * @public
 */
export class WindowedP2Quantile {
  readonly options: ResolvedWindowedP2QuantileOptions;
  private older: P2Quantile;
  private younger: P2Quantile;
  private sinceRotation = 0;
  private epochCount = 0;
  private rotationCount = 0;

  constructor(p: number, options: WindowedP2QuantileOptions = {}) {
    const window = options.window ?? DEFAULT_P2_WINDOW;
    new OptionProblems('WindowedP2Quantile')
      .check(isOpenUnit(p), 'p', 'in (0, 1)', p)
      .check(Number.isInteger(window) && window >= 5, 'window', 'an integer ≥ 5', window)
      .throwIfAny();
    this.options = Object.freeze({ p, window });
    this.older = new P2Quantile(p);
    this.younger = new P2Quantile(p);
  }

  /** Samples added in the current epoch (since construction or the last `reset()`). */
  get count(): number {
    return this.epochCount;
  }

  /** Rotations since construction or the last `reset()` (SPEC §11.6). */
  get rotations(): number {
    return this.rotationCount;
  }

  /** Adds one sample to both estimators; rotates every `window` samples. Non-finite values are ignored. */
  add(x: number): void {
    if (!(x - x === 0)) return;
    this.older.add(x);
    this.younger.add(x);
    this.epochCount++;
    if (++this.sinceRotation >= this.options.window) {
      const retired = this.older;
      this.older = this.younger;
      this.younger = retired;
      retired.reset();
      this.sinceRotation = 0;
      this.rotationCount++;
    }
  }

  /** The older estimator's value; `undefined` until five samples of the current epoch. */
  value(): number | undefined {
    return this.older.value();
  }

  /** `value() > threshold`, false while warming; allocation-free (see {@link P2Quantile.exceeds}). */
  exceeds(threshold: number): boolean {
    return this.older.exceeds(threshold);
  }

  /** Opens a fresh epoch: both estimators and the rotation count start over. */
  reset(): void {
    this.older.reset();
    this.younger.reset();
    this.sinceRotation = 0;
    this.epochCount = 0;
    this.rotationCount = 0;
  }

  toJSON(): WindowedP2QuantileJSON {
    return {
      p: this.options.p,
      window: this.options.window,
      count: this.epochCount,
      rotations: this.rotationCount,
      older: this.older.toJSON(),
      younger: this.younger.toJSON(),
    };
  }
}
