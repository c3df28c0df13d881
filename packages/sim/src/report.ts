import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SCENARIOS, type Check, type ScenarioOutcome, type ScenarioScale } from './scenarios';
import { CHECKS_PLACEHOLDER, checksTable, formatMeasure, table } from './scenarios/markdown';
import type { Measure } from './scenarios/scenario-types';

/** A scenario's outcome plus how long it took to simulate. */
export interface TimedOutcome {
  readonly outcome: ScenarioOutcome<unknown>;
  readonly wallMs: number;
}

/** Runs every scenario at `scale`, one after the other (each is deterministic for its seed). */
export async function runScenarios(
  scale: ScenarioScale,
  onDone?: (t: TimedOutcome) => void,
): Promise<TimedOutcome[]> {
  const out: TimedOutcome[] = [];
  for (const scenario of SCENARIOS) {
    const t0 = performance.now();
    const outcome = await scenario(scale);
    const t = { outcome, wallMs: performance.now() - t0 };
    onDone?.(t);
    out.push(t);
  }
  return out;
}

/** The scenarios run again on another seed, to judge every target on more than one draw. */
export interface SeedRun {
  readonly seed: number;
  readonly results: readonly TimedOutcome[];
}

const verdict = (c: Check): string =>
  c.reportOnly === true ? 'ℹ️ reported' : c.met ? '✅ met' : '❌ **missed**';

/** Median and worst of one measure over the seeds; NaN ("never happened") sorts as the worst. */
function medianAndWorst(values: readonly number[], better: Measure['better']): [number, number] {
  const badness = (x: number): number =>
    Number.isNaN(x) ? Infinity : better === 'higher' ? -x : better === 'lower' ? x : Math.abs(x - 1);
  const sorted = [...values].sort((a, b) => badness(a) - badness(b));
  const n = sorted.length;
  const mid = n % 2 === 1 ? sorted[(n - 1) / 2]! : (sorted[n / 2 - 1]! + sorted[n / 2]!) / 2;
  return [mid, sorted[n - 1]!];
}

interface SeedRow {
  readonly cells: string[];
  readonly missed: boolean;
}

/**
 * One row per check of a scenario, judged over every seed: the default seed's figures, the median and the worst
 * over all seeds, and on how many seeds it was met. A check missing from some seed's run counts as missed there.
 */
function seedRows(index: number, runs: readonly SeedRun[]): SeedRow[] {
  const first = runs[0]!.results[index]!.outcome;
  return first.checks.map((check) => {
    const perSeed = runs.map((r) => r.results[index]?.outcome.checks.find((c) => c.name === check.name));
    const met = perSeed.filter((c) => c?.met === true).length;
    let median = perSeed.map((c) => c?.achieved ?? '—').join(' · ');
    let worst = '—';
    const measures = check.measures;
    if (measures !== undefined && perSeed.every((c) => c?.measures?.length === measures.length)) {
      const pairs = measures.map((m, i) =>
        medianAndWorst(
          perSeed.map((c) => c!.measures![i]!.value),
          m.better,
        ),
      );
      median = measures.map((m, i) => formatMeasure(m, pairs[i]![0])).join(', ');
      worst = measures.map((m, i) => formatMeasure(m, pairs[i]![1])).join(', ');
    }
    const all = met === runs.length;
    const judged =
      check.reportOnly === true
        ? 'ℹ️ reported'
        : all
          ? '✅ met on every seed'
          : `❌ **missed** on ${runs.length - met} of ${runs.length} seeds`;
    return {
      cells: [check.name, check.target, check.achieved, median, worst, `${met}/${runs.length}`, judged],
      missed: check.reportOnly !== true && !all,
    };
  });
}

function seedHeader(runs: readonly SeedRun[]): string[] {
  return [
    'target',
    'wanted',
    `seed ${runs[0]!.seed}`,
    `median of ${runs.length} seeds`,
    'worst seed',
    'met on',
    '',
  ];
}

/**
 * SIMULATIONS.md: a summary of every target, then one section per scenario with its charts. `results` is the
 * default seed's run (its tables and charts are shown); with `otherSeeds`, every target is also judged on them.
 */
export function renderReport(
  results: readonly TimedOutcome[],
  scale: ScenarioScale,
  chartDir: string,
  otherSeeds: readonly SeedRun[] = [],
): string {
  const runs: SeedRun[] = [{ seed: scale.seed, results }, ...otherSeeds];
  const multi = runs.length > 1;
  const sectionRows = results.map((_, i) => seedRows(i, runs));
  const checks = multi
    ? results.flatMap(({ outcome }, i) =>
        sectionRows[i]!.map((r) => [outcome.title.split('.')[0]!, ...r.cells.filter((_, j) => j !== 2)]),
      )
    : results.flatMap(({ outcome }) =>
        outcome.checks.map((c) => [outcome.title.split('.')[0]!, c.name, c.target, c.achieved, verdict(c)]),
      );
  const judged = results.flatMap(({ outcome }) => outcome.checks.filter((c) => c.reportOnly !== true)).length;
  const missed = multi
    ? sectionRows.flat().filter((r) => r.missed).length
    : results.flatMap(({ outcome }) => outcome.checks).filter((c) => c.reportOnly !== true && !c.met).length;
  const seeds = runs.map((r) => r.seed).join(', ');
  const lines = [
    '# Ballast simulations',
    '',
    '<!-- Generated by `npm run sim` (packages/sim/src/cli.ts). Do not edit by hand: rerun it. -->',
    '',
    `Every number and chart below comes from \`@ballast/sim\`: a discrete-event simulation in virtual time that ` +
      `drives the **real** \`Resilience\` executor of \`@ballast/core\` (no re-implementation of any strategy) against a ` +
      `simulated downstream (c servers, a FIFO queue, a service-time distribution, capacity/latency/errors changing ` +
      `over time) under open-loop Poisson clients. Each scenario simulates ${scale.duration / 1000} s of traffic (unless ` +
      `its section says otherwise) with seed ${scale.seed}; the same seed reproduces every number exactly.` +
      (multi
        ? ` Every target is judged on ${runs.length} seeds (${seeds}): the tables show seed ${scale.seed}'s figures, ` +
          `the median and the worst over the seeds, and on how many seeds the target was met; a target counts as met ` +
          `only when every seed meets it. Sections' other tables and charts are seed ${scale.seed}'s; extra ` +
          `variants that explain a miss run on seed ${scale.seed} only.`
        : '') +
      ` Charts are rendered to SVG in Node by ` +
      `Apache ECharts (server-side rendering). The jest suite runs the same scenarios at a reduced scale with assertions.`,
    '',
    `Targets come from issue 9 (the throttle's recovery and the multi-seed judgement from issue 30). ${missed === 0 ? 'All are met.' : `**${missed} of ${judged} checks are missed**${multi ? ' on at least one seed' : ''}; each section says why, from an investigation of the cause.`}`,
    '',
    multi
      ? table(['scenario', ...seedHeader(runs).filter((_, j) => j !== 2)], checks)
      : table(['scenario', 'check', 'target', 'achieved', ''], checks),
    '',
  ];
  results.forEach(({ outcome, wallMs }, i) => {
    const targets = multi
      ? table(
          seedHeader(runs),
          sectionRows[i]!.map((r) => r.cells),
        )
      : checksTable(outcome.checks);
    lines.push(`## ${outcome.title}`, '', outcome.markdown.replace(CHECKS_PLACEHOLDER, targets), '');
    for (const c of outcome.charts) lines.push(`![${c.alt}](${chartDir}/${c.file})`, '');
    lines.push(
      `<sub>${outcome.simulations} simulations of ${scale.duration / 1000} s each, in ${(wallMs / 1000).toFixed(1)} s ` +
        `of wall time (${(wallMs / 1000 / outcome.simulations).toFixed(1)} s per simulation on a shared 2-core machine)` +
        `${multi ? `, for seed ${scale.seed}` : ''}.</sub>`,
      '',
    );
  });
  return lines.join('\n');
}

/** Writes the charts under `root/chartDir` and `root/SIMULATIONS.md`; returns the files written. */
export function writeReport(
  results: readonly TimedOutcome[],
  scale: ScenarioScale,
  root: string,
  chartDir = 'docs/sim',
  otherSeeds: readonly SeedRun[] = [],
): string[] {
  const dir = join(root, chartDir);
  mkdirSync(dir, { recursive: true });
  const files: string[] = [];
  for (const { outcome } of results) {
    for (const c of outcome.charts) {
      const p = join(dir, c.file);
      writeFileSync(p, c.svg);
      files.push(p);
    }
  }
  const md = join(root, 'SIMULATIONS.md');
  writeFileSync(md, renderReport(results, scale, chartDir, otherSeeds));
  files.push(md);
  return files;
}
