import * as echarts from 'echarts';

/**
 * Server-side SVG charts with Apache ECharts (`renderer: 'svg', ssr: true` + `renderToSVGString()`): real axes,
 * legends and scales from a charting library, no DOM and no browser. Animation is off so the output depends only
 * on the data — the same run yields byte-identical files.
 */

/** A line series: `[x, y]` points (y null = gap). */
export interface LineSeries {
  readonly name: string;
  readonly data: readonly (readonly [number, number | null])[];
  /** Draw as a step function (states, limits). */
  readonly step?: boolean;
  readonly dashed?: boolean;
  /** Plot against the right-hand axis. */
  readonly rightAxis?: boolean;
  readonly color?: string;
}

export interface LineChartSpec {
  readonly title: string;
  readonly subtitle?: string;
  readonly xName: string;
  readonly yName: string;
  readonly rightName?: string;
  readonly series: readonly LineSeries[];
  readonly yMax?: number;
  readonly rightMax?: number;
  readonly logY?: boolean;
  /** Vertical markers, e.g. "capacity halves". */
  readonly markers?: readonly { readonly x: number; readonly label: string }[];
  readonly width?: number;
  readonly height?: number;
}

export interface BarChartSpec {
  readonly title: string;
  readonly subtitle?: string;
  readonly categories: readonly string[];
  readonly yName: string;
  readonly series: readonly {
    readonly name: string;
    readonly values: readonly number[];
    readonly color?: string;
  }[];
  readonly logY?: boolean;
  readonly width?: number;
  readonly height?: number;
}

/** A colour-blind-safe palette (Okabe–Ito), fixed so charts are stable across runs. */
export const PALETTE = [
  '#0072B2',
  '#D55E00',
  '#009E73',
  '#CC79A7',
  '#E69F00',
  '#56B4E9',
  '#000000',
  '#F0E442',
];

function render(option: Record<string, unknown>, width: number, height: number): string {
  const chart = echarts.init(null, null, { renderer: 'svg', ssr: true, width, height });
  try {
    chart.setOption({ animation: false, backgroundColor: '#ffffff', color: PALETTE, ...option });
    return stableClassNames(chart.renderToSVGString());
  } finally {
    chart.dispose();
  }
}

/**
 * zrender names CSS classes and element ids after process-wide counters (`zr3-cls-7`, `zr3-c0`), so the same
 * chart rendered later in a process would differ. Renumber classes by first appearance and drop the instance
 * number from ids: each SVG file is a document of its own.
 */
function stableClassNames(svg: string): string {
  const names = new Map<string, string>();
  return svg
    .replace(/zr\d+-cls-\d+/g, (m) => {
      let n = names.get(m);
      if (n === undefined) {
        n = `cls${names.size}`;
        names.set(m, n);
      }
      return n;
    })
    .replace(/\bzr\d+-/g, 'zr-');
}

function title(text: string, subtext: string | undefined): Record<string, unknown> {
  return {
    text,
    subtext: subtext ?? '',
    left: 'center',
    textStyle: { fontSize: 15 },
    subtextStyle: { fontSize: 11 },
  };
}

/** Renders a line chart to an SVG string. */
export function renderLineChart(spec: LineChartSpec): string {
  const markers = spec.markers ?? [];
  const series = spec.series.map((s, i) => ({
    type: 'line',
    name: s.name,
    data: s.data.map(([x, y]) => [x, y]),
    showSymbol: false,
    connectNulls: false,
    step: s.step === true ? 'end' : false,
    yAxisIndex: s.rightAxis === true ? 1 : 0,
    lineStyle: { width: 1.6, type: s.dashed === true ? 'dashed' : 'solid' },
    ...(s.color === undefined ? {} : { color: s.color }),
    ...(i === 0 && markers.length > 0
      ? {
          markLine: {
            silent: true,
            symbol: 'none',
            lineStyle: { color: '#888', type: 'dotted' },
            label: { formatter: '{b}', fontSize: 10 },
            data: markers.map((m) => ({ xAxis: m.x, name: m.label })),
          },
        }
      : {}),
  }));
  const yAxis: Record<string, unknown>[] = [
    {
      type: spec.logY === true ? 'log' : 'value',
      name: spec.yName,
      nameLocation: 'middle',
      nameGap: 48,
      ...(spec.yMax === undefined ? {} : { max: spec.yMax }),
      ...(spec.logY === true ? {} : { min: 0 }),
    },
  ];
  if (spec.rightName !== undefined) {
    yAxis.push({
      type: 'value',
      name: spec.rightName,
      nameLocation: 'middle',
      nameGap: 40,
      min: 0,
      splitLine: { show: false },
      ...(spec.rightMax === undefined ? {} : { max: spec.rightMax }),
    });
  }
  return render(
    {
      title: title(spec.title, spec.subtitle),
      legend: { bottom: 0, type: 'plain', textStyle: { fontSize: 11 } },
      grid: { left: 70, right: spec.rightName === undefined ? 30 : 70, top: 80, bottom: 70 },
      xAxis: {
        type: 'value',
        name: spec.xName,
        nameLocation: 'middle',
        nameGap: 26,
        min: 'dataMin',
        max: 'dataMax',
      },
      yAxis,
      series,
    },
    spec.width ?? 820,
    spec.height ?? 380,
  );
}

/** Renders a grouped bar chart to an SVG string. */
export function renderBarChart(spec: BarChartSpec): string {
  return render(
    {
      title: title(spec.title, spec.subtitle),
      legend: { bottom: 0, textStyle: { fontSize: 11 } },
      grid: { left: 70, right: 30, top: 80, bottom: 80 },
      xAxis: { type: 'category', data: [...spec.categories], axisLabel: { interval: 0, fontSize: 11 } },
      yAxis: {
        type: spec.logY === true ? 'log' : 'value',
        name: spec.yName,
        nameLocation: 'middle',
        nameGap: 48,
      },
      series: spec.series.map((s) => ({
        type: 'bar',
        name: s.name,
        data: [...s.values],
        label: {
          show: true,
          position: 'top',
          fontSize: 10,
          formatter: (p: { value: number }) => formatNumber(p.value),
        },
        ...(s.color === undefined ? {} : { color: s.color }),
      })),
    },
    spec.width ?? 820,
    spec.height ?? 380,
  );
}

/** Compact number formatting for chart labels and tables: 3 significant digits, thousands unabbreviated. */
export function formatNumber(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  const a = Math.abs(x);
  if (a >= 100) return Math.round(x).toString();
  if (a >= 10) return x.toFixed(1);
  if (a >= 1) return x.toFixed(2);
  if (a === 0) return '0';
  return x.toPrecision(2);
}
