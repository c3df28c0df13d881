/** How big a scenario run is: `npm run sim` uses {@link FULL_SCALE}; the jest suite a shorter one. */
export interface ScenarioScale {
  /** Virtual ms of arrivals; phase changes are placed at fixed fractions of it. */
  readonly duration: number;
  readonly seed: number;
  /** Also run the extra variants that explain a missed target (default true; the jest suite skips them). */
  readonly investigate?: boolean;
}

export const FULL_SCALE: ScenarioScale = Object.freeze({ duration: 60_000, seed: 1 });

/** The jest suite's scale: 40 s of virtual time, no investigation variants. */
export const TEST_SCALE: ScenarioScale = Object.freeze({ duration: 40_000, seed: 1, investigate: false });

/** One target of the issue, with what the run achieved. `met: false` is reported, never hidden. */
export interface Check {
  readonly name: string;
  readonly target: string;
  readonly achieved: string;
  readonly met: boolean;
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
