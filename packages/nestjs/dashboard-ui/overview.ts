// The overview: one row per (policy, route), virtualized — only the rows in view exist in the DOM, so 1,000 routes
// cost what a screenful costs. Rows are buttons in a list: Tab reaches the list, arrows move, Enter opens.
import { h, text } from './dom';
import {
  bulkheadText,
  callsText,
  historyText,
  latencyText,
  ms,
  rejectionsText,
  routeLabel,
  stateClass,
  stateName,
  tokensText,
} from './format';
import type { Model, Row } from './model';

const ROW_HEIGHT = 56;
const OVERSCAN = 6;

const COLUMNS = [
  'Policy / route',
  'Breaker',
  'Calls/s',
  'Rejections/s',
  'Bulkhead',
  'Tokens',
  'Hedge',
  'Latency',
];

interface RowView {
  readonly el: HTMLButtonElement;
  readonly cells: HTMLElement[];
  readonly badge: HTMLElement;
  readonly history: HTMLElement;
  key: string | undefined;
}

export class Overview {
  readonly root: HTMLElement;
  readonly #viewport: HTMLElement;
  readonly #spacer: HTMLElement;
  readonly #count: HTMLElement;
  readonly #filter: HTMLInputElement;
  readonly #pool: RowView[] = [];
  #visible: string[] = [];
  #scheduled = false;
  #focusIndex = 0;

  constructor(
    private readonly model: Model,
    private readonly open: (key: string) => void,
  ) {
    this.#filter = h('input', {
      type: 'search',
      id: 'filter',
      placeholder: 'policy or route',
      autocomplete: 'off',
    });
    this.#count = h('span.count', { 'aria-live': 'polite' });
    this.#spacer = h('div.spacer');
    this.#viewport = h(
      'div.viewport',
      { role: 'list', 'aria-label': 'Policies and routes', tabindex: '-1' },
      this.#spacer,
    );
    const head = h('div.row.head', { 'aria-hidden': 'true' }, ...COLUMNS.map((c) => h('span', {}, c)));
    this.root = h(
      'section.overview',
      { 'aria-labelledby': 'overview-title' },
      h('h2', { id: 'overview-title' }, 'Every policy and route'),
      h('div.toolbar', {}, h('label', { for: 'filter' }, 'Filter '), this.#filter, this.#count),
      head,
      this.#viewport,
    );
    this.#filter.addEventListener('input', () => this.update());
    this.#viewport.addEventListener('scroll', () => this.#schedule(), { passive: true });
    this.#viewport.addEventListener('keydown', (e) => this.#key(e));
    this.#viewport.addEventListener('click', (e) => {
      const key = (e.target as Element).closest<HTMLElement>('[data-key]')?.dataset['key'];
      if (key !== undefined) this.open(key);
    });
  }

  /** New data: recompute which rows match, then draw the ones in view (at most once per frame). */
  update(): void {
    const q = this.#filter.value.trim().toLowerCase();
    const all = this.model.order;
    this.#visible =
      q === ''
        ? all
        : all.filter((k) => {
            const e = this.model.rows.get(k)!.entry;
            return `${e.policy} ${e.route ?? ''} ${stateName(e)}`.toLowerCase().includes(q);
          });
    text(this.#count, q === '' ? `${all.length} rows` : `${this.#visible.length} of ${all.length} rows`);
    this.#spacer.style.height = `${this.#visible.length * ROW_HEIGHT}px`;
    this.#schedule();
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    requestAnimationFrame(() => {
      this.#scheduled = false;
      this.#draw();
    });
  }

  #draw(): void {
    const top = this.#viewport.scrollTop;
    const height = this.#viewport.clientHeight || 600;
    const first = Math.max(0, Math.floor(top / ROW_HEIGHT) - OVERSCAN);
    const last = Math.min(this.#visible.length, Math.ceil((top + height) / ROW_HEIGHT) + OVERSCAN);
    const needed = last - first;
    while (this.#pool.length < needed) this.#pool.push(this.#makeRow());
    const focused = document.activeElement;
    for (let i = 0; i < this.#pool.length; i++) {
      const view = this.#pool[i]!;
      const index = first + i;
      if (i >= needed) {
        if (view.el.isConnected && view.el !== focused) view.el.remove();
        view.key = undefined;
        continue;
      }
      const key = this.#visible[index]!;
      const row = this.model.rows.get(key);
      if (row === undefined) continue;
      this.#fill(view, row, index);
      if (!view.el.isConnected) this.#viewport.append(view.el);
    }
  }

  #makeRow(): RowView {
    const badge = h('span.badge');
    const history = h('span.history');
    const cells = [
      h('span.name'),
      h('span.breaker', {}, badge, history),
      ...COLUMNS.slice(2).map(() => h('span')),
    ];
    const el = h('button.row', { type: 'button' }, ...cells);
    return { el, cells, badge, history, key: undefined };
  }

  #fill(view: RowView, row: Row, index: number): void {
    const e = row.entry;
    view.key = row.key;
    view.el.dataset['key'] = row.key;
    view.el.dataset['index'] = String(index);
    view.el.dataset['policy'] = e.policy;
    view.el.dataset['route'] = e.route ?? '';
    view.el.tabIndex = index === this.#focusIndex ? 0 : -1;
    view.el.style.transform = `translateY(${index * ROW_HEIGHT}px)`;
    const state = stateName(e);
    view.el.setAttribute('aria-label', `${e.policy}, ${routeLabel(e.route)}, breaker ${state}`);
    text(view.cells[0]!, `${e.policy}\n${routeLabel(e.route)}`);
    text(view.badge, state);
    const cls = `badge ${stateClass(e)}`;
    if (view.badge.className !== cls) view.badge.className = cls;
    text(view.history, historyText(e));
    text(view.cells[2]!, callsText(e));
    text(view.cells[3]!, rejectionsText(e));
    text(view.cells[4]!, bulkheadText(e));
    text(view.cells[5]!, tokensText(e));
    text(view.cells[6]!, e.hedgeDelay === undefined ? '–' : ms(e.hedgeDelay));
    text(view.cells[7]!, latencyText(e));
  }

  #key(e: KeyboardEvent): void {
    const current = (e.target as HTMLElement).closest<HTMLElement>('[data-index]');
    if (current === null) return;
    const index = Number(current.dataset['index']);
    const step: Record<string, number> = { ArrowDown: 1, ArrowUp: -1, PageDown: 10, PageUp: -10 };
    let next: number | undefined;
    if (e.key in step) next = index + step[e.key]!;
    else if (e.key === 'Home') next = 0;
    else if (e.key === 'End') next = this.#visible.length - 1;
    if (next === undefined) return;
    e.preventDefault();
    this.focusRow(Math.max(0, Math.min(this.#visible.length - 1, next)));
  }

  /** Moves keyboard focus to a row, scrolling it into view (it may not exist in the DOM yet). */
  focusRow(index: number): void {
    this.#focusIndex = index;
    const top = index * ROW_HEIGHT;
    const vp = this.#viewport;
    if (top < vp.scrollTop) vp.scrollTop = top;
    else if (top + ROW_HEIGHT > vp.scrollTop + vp.clientHeight)
      vp.scrollTop = top + ROW_HEIGHT - vp.clientHeight;
    this.#draw();
    this.#viewport.querySelector<HTMLElement>(`[data-index="${index}"]`)?.focus();
  }
}
