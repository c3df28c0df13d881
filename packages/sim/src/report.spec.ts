import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderLineChart } from './charts';
import { renderReport, writeReport, type TimedOutcome } from './report';

const outcome: TimedOutcome = {
  wallMs: 1234,
  outcome: {
    id: 'demo',
    title: '9. Demo scenario',
    metrics: {},
    simulations: 2,
    checks: [
      { name: 'fast', target: '≤ 1', achieved: '0.5', met: true },
      { name: 'fair', target: '≥ 0.95', achieved: '0.9', met: false },
    ],
    charts: [
      {
        file: 'demo.svg',
        alt: 'a demo chart',
        svg: renderLineChart({
          title: 'Demo',
          xName: 'x',
          yName: 'y',
          series: [{ name: 's', data: [[0, 1]] }],
        }),
      },
    ],
    markdown: 'Body text.',
  },
};

describe('report', () => {
  it('summarizes every check (misses stated plainly) and links each chart', () => {
    const md = renderReport([outcome], { duration: 60_000, seed: 1 }, 'docs/sim');
    expect(md).toMatch(/^# Ballast simulations/);
    expect(md).toContain('**1 of 2 checks are missed**');
    expect(md).toContain('| 9 | fair | ≥ 0.95 | 0.9 | ❌ **missed** |');
    expect(md).toContain('## 9. Demo scenario');
    expect(md).toContain('![a demo chart](docs/sim/demo.svg)');
    expect(md).toContain('2 simulations of 60 s each, in 1.2 s of wall time (0.6 s per simulation');
  });

  it('judges every check over several seeds: median, worst, and met only when every seed meets it', () => {
    const withMeasures = (goodput: number, p99: number, met: boolean): TimedOutcome => ({
      wallMs: 1000,
      outcome: {
        ...outcome.outcome,
        checks: [
          {
            name: 'limiter',
            target: 'goodput ≥ 90%, p99 ≤ 2×',
            achieved: `${goodput}`,
            met,
            measures: [
              { label: '', value: goodput, better: 'higher', unit: 'pct' },
              { label: 'p99 ', value: p99, better: 'lower', unit: 'times' },
            ],
          },
          { name: 'info', target: 'reported, no target', achieved: 'x', met: true, reportOnly: true },
        ],
        markdown: 'Body.\n\n<!-- checks -->\n\nAfter.',
      },
    });
    const md = renderReport([withMeasures(0.95, 1.5, true)], { duration: 60_000, seed: 1 }, 'docs/sim', [
      { seed: 7, results: [withMeasures(0.91, 2.5, false)] },
      { seed: 1234, results: [withMeasures(0.99, 1.8, true)] },
    ]);
    expect(md).toContain('**1 of 1 checks are missed** on at least one seed');
    expect(md).toContain('judged on 3 seeds (1, 7, 1234)');
    // Section table: seed 1's text, the median (0.95, 1.8×) and the worst (0.91, 2.5×) of each measure.
    expect(md).toContain(
      '| limiter | goodput ≥ 90%, p99 ≤ 2× | 0.95 | 95.0%, p99 1.80× | 91.0%, p99 2.50× | 2/3 | ❌ **missed** on 1 of 3 seeds |',
    );
    expect(md).toContain('| info | reported, no target | x | x · x · x | — | 3/3 | ℹ️ reported |');
    expect(md).not.toContain('<!-- checks -->');
  });

  it('writes the SVG charts and SIMULATIONS.md under the root', () => {
    const root = mkdtempSync(join(tmpdir(), 'ballast-report-'));
    const files = writeReport([outcome], { duration: 60_000, seed: 1 }, root);
    expect(files.map((f) => f.slice(root.length + 1))).toEqual(['docs/sim/demo.svg', 'SIMULATIONS.md']);
    expect(readdirSync(join(root, 'docs/sim'))).toEqual(['demo.svg']);
    expect(readFileSync(join(root, 'docs/sim/demo.svg'), 'utf8')).toMatch(/^<svg/);
  });
});
