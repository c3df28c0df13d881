// Small time-series charts (uPlot): each line also named in its legend, so no meaning rests on colour alone.
import uPlot from 'uplot';

export interface Line {
  readonly label: string;
  readonly stroke: string;
  readonly dash?: number[];
}

export class Chart {
  readonly root: HTMLElement;
  #plot: uPlot | undefined;

  constructor(
    title: string,
    private readonly lines: readonly Line[],
    private readonly unit: string,
  ) {
    this.root = document.createElement('figure');
    this.root.className = 'chart';
    const caption = document.createElement('figcaption');
    caption.textContent = title;
    this.root.append(caption);
  }

  /** Draws `data` ([times in s, ...one array per line]); creates the chart on first use, once it is in the DOM. */
  update(data: (number | null)[][]): void {
    const aligned = data as uPlot.AlignedData;
    if (this.#plot !== undefined) return this.#plot.setData(aligned);
    const width = Math.max(280, Math.min(560, this.root.parentElement?.clientWidth ?? 480));
    this.#plot = new uPlot(
      {
        width,
        height: 160,
        scales: {
          x: { time: true },
          y: { range: (_u, min, max) => [Math.min(0, min), Math.max(1, max * 1.1)] },
        },
        axes: [{}, { label: this.unit, size: 50 }],
        series: [
          {},
          ...this.lines.map((l) => ({
            label: l.label,
            stroke: l.stroke,
            width: 2,
            ...(l.dash === undefined ? {} : { dash: l.dash }),
            spanGaps: true,
          })),
        ],
        cursor: { drag: { x: false, y: false } },
      },
      aligned,
      this.root,
    );
  }

  destroy(): void {
    this.#plot?.destroy();
    this.#plot = undefined;
  }
}
