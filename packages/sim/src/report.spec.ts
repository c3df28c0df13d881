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

  it('writes the SVG charts and SIMULATIONS.md under the root', () => {
    const root = mkdtempSync(join(tmpdir(), 'ballast-report-'));
    const files = writeReport([outcome], { duration: 60_000, seed: 1 }, root);
    expect(files.map((f) => f.slice(root.length + 1))).toEqual(['docs/sim/demo.svg', 'SIMULATIONS.md']);
    expect(readdirSync(join(root, 'docs/sim'))).toEqual(['demo.svg']);
    expect(readFileSync(join(root, 'docs/sim/demo.svg'), 'utf8')).toMatch(/^<svg/);
  });
});
