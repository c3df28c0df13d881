import { formatNumber, renderBarChart, renderLineChart } from './charts';

describe('charts (ECharts server-side SVG)', () => {
  const line = {
    title: 'Limit',
    xName: 'time (s)',
    yName: 'limit',
    series: [
      {
        name: 'AIMD',
        data: [
          [0, 100],
          [1, 90],
          [2, null],
          [3, 20],
        ] as [number, number | null][],
        step: true,
      },
      {
        name: 'servers',
        data: [
          [0, 10],
          [3, 10],
        ] as [number, number][],
        dashed: true,
        rightAxis: true,
      },
    ],
    rightName: 'servers',
    markers: [{ x: 1.5, label: 'capacity ÷2' }],
  };

  it('renders a line chart to a standalone SVG with title, legend and markers', () => {
    const svg = renderLineChart(line);
    expect(svg).toMatch(/^<svg[^>]*width="820"[^>]*height="380"/);
    expect(svg).toContain('Limit');
    expect(svg).toContain('AIMD');
    expect(svg).toContain('capacity ÷2');
    expect(svg.endsWith('</svg>')).toBe(true);
  });

  it('is deterministic: the same data gives the same bytes', () => {
    expect(renderLineChart(line)).toBe(renderLineChart(line));
  });

  it('renders grouped bars with value labels', () => {
    const svg = renderBarChart({
      title: 'Goodput',
      categories: ['none', 'AIMD'],
      yName: '%',
      series: [{ name: 'goodput', values: [0, 99.6] }],
    });
    expect(svg).toContain('Goodput');
    expect(svg).toContain('99.6');
    expect(svg).toContain('AIMD');
  });

  it('formats numbers compactly', () => {
    expect([
      formatNumber(42979.3),
      formatNumber(70.54),
      formatNumber(5.25),
      formatNumber(0.0123),
      formatNumber(0),
    ]).toEqual(['42979', '70.5', '5.25', '0.012', '0']);
  });
});
