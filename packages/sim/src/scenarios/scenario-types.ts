/** How big a scenario run is: `npm run sim` uses {@link FULL_SCALE}; the jest suite a shorter one. */
export interface ScenarioScale {
  /** Virtual ms of arrivals; phase changes are placed at fixed fractions of it. */
  readonly duration: number;
  readonly seed: number;
  /** Also run the extra variants that explain a missed target (default true; the jest suite skips them). */
  readonly investigate?: boolean;
}

export const FULL_SCALE: ScenarioScale = Object.freeze({ duration: 60_000, seed: 1 });

/**
 * The seeds `npm run sim` judges every target on: the default seed first (its run gives the detailed tables and
 * charts), then two more. One seed is one draw of the arrivals and service times; a target met on one seed only
 * is luck, not a property of the limiter.
 */
export const REPORT_SEEDS: readonly number[] = Object.freeze([1, 7, 1234]);

/** The jest suite's scale: 40 s of virtual time, no investigation variants. */
export const TEST_SCALE: ScenarioScale = Object.freeze({ duration: 40_000, seed: 1, investigate: false });

/**
 * A figure behind a check, so that the check can be judged over several seeds: the report shows the median and
 * the worst value (the lowest when `better` is `'higher'`, else the highest; NaN — "never happened" — is worst).
 */
export interface Measure {
  /** Prefix when shown ('' for none), e.g. `'p99 '`. */
  readonly label: string;
  readonly value: number;
  /** `'nearer 1'`: a ratio whose ideal is 1 (the worst is the farthest from it). */
  readonly better: 'higher' | 'lower' | 'nearer 1';
  /** How to print it: percentage, ratio with `×`, seconds or ms (from ms), or a number with that many decimals. */
  readonly unit: 'pct' | 'times' | 'secs' | 'ms' | 'plain0' | 'plain2' | 'plain3' | 'plain4';
}

/** One target of the issue, with what the run achieved. `met: false` is reported, never hidden. */
export interface Check {
  readonly name: string;
  readonly target: string;
  readonly achieved: string;
  readonly met: boolean;
  /** A figure reported for information, with no target: never counted as met or missed. */
  readonly reportOnly?: boolean;
  /** The figures `achieved` is made of, for the median and worst over seeds (absent: each seed's text is shown). */
  readonly measures?: readonly Measure[];
}

/** A rendered chart: `file` is the SVG's file name (the report decides where it lives). */
export interface Chart {
  readonly file: string;
  readonly alt: string;
  readonly svg: string;
}

/** What every scenario returns: its numbers (for tests), its targets, charts and a markdown section body. */
export interface ScenarioOutcome<M> {
  readonly id: string;
  readonly title: string;
  readonly metrics: M;
  /** How many 60 s-style simulations the scenario ran (its variants). */
  readonly simulations: number;
  readonly checks: readonly Check[];
  readonly charts: readonly Chart[];
  /** Markdown (no heading); charts are appended by the report. */
  readonly markdown: string;
}
