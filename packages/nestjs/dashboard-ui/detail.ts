// One policy's (policy, route): its numbers, its history as charts, and the operator's actions.
import { api, describeFailure } from './api';
import { Chart } from './charts';
import { h, text } from './dom';
import {
  ago,
  breakerWord,
  bulkheadText,
  callsText,
  latencyText,
  ms,
  rejectionsText,
  routeLabel,
  stateClass,
  stateName,
  tokensText,
} from './format';
import { locate } from './json-path';
import type { Row } from './model';

interface Violation {
  readonly path: string;
  readonly constraint: string;
  readonly value?: unknown;
}

export class DetailView {
  readonly root: HTMLElement;
  readonly #facts: HTMLElement;
  readonly #badge: HTMLElement;
  readonly #history: HTMLOListElement;
  readonly #charts: { chart: Chart; data: (row: Row) => (number | null)[][]; when: (row: Row) => boolean }[];
  readonly #actionStatus: HTMLElement;
  readonly #editor: HTMLTextAreaElement;
  readonly #errors: HTMLUListElement;
  readonly #retuneStatus: HTMLElement;
  readonly #ttl: HTMLInputElement;
  readonly #reason: HTMLInputElement;

  constructor(
    private row: Row,
    private readonly close: () => void,
  ) {
    const e = row.entry;
    this.#badge = h('span.badge');
    this.#facts = h('dl.facts');
    this.#history = h('ol.history-list');
    this.#charts = [
      {
        chart: new Chart(
          'Concurrency: limit (adaptive), in use, queued',
          [
            { label: 'limit', stroke: '#1f5fbf' },
            { label: 'in use', stroke: '#2e7d32', dash: [6, 3] },
            { label: 'queued', stroke: '#b35c00', dash: [2, 2] },
          ],
          'calls',
        ),
        data: (r) => [r.series.t, r.series.limit, r.series.inUse, r.series.waiting],
        when: (r) => r.entry.concurrencyLimit !== undefined,
      },
      {
        chart: new Chart(
          'Calls per second by outcome',
          [
            { label: 'success', stroke: '#2e7d32' },
            { label: 'failure', stroke: '#c62828', dash: [6, 3] },
            { label: 'rejected', stroke: '#6a1b9a', dash: [2, 2] },
          ],
          'calls/s',
        ),
        data: (r) => [r.series.t, r.series.success, r.series.failure, r.series.rejected],
        when: () => true,
      },
      {
        chart: new Chart(
          'Latency',
          [
            { label: 'p50', stroke: '#1f5fbf' },
            { label: 'p99', stroke: '#c62828', dash: [6, 3] },
          ],
          'ms',
        ),
        data: (r) => [r.series.t, r.series.p50, r.series.p99],
        when: () => true,
      },
    ];
    this.#actionStatus = h('p.status', { role: 'status', id: 'action-status' });
    this.#ttl = h('input', { id: 'ttl', placeholder: 'e.g. 15m', autocomplete: 'off' });
    this.#reason = h('input', { id: 'reason', placeholder: 'why (for the audit log)', autocomplete: 'off' });
    this.#editor = h('textarea', {
      id: 'spec-editor',
      rows: '14',
      spellcheck: 'false',
      'aria-describedby': 'spec-errors',
    });
    this.#errors = h('ul.errors', { id: 'spec-errors', 'aria-live': 'polite' });
    this.#retuneStatus = h('p.status', { role: 'status', id: 'retune-status' });
    const target = e.route === null ? 'every route of the policy' : `route ${e.route} only`;
    const back = h('button', { type: 'button', id: 'back' }, '← Overview');
    back.addEventListener('click', () => this.close());
    const forceOpen = h('button', { type: 'button', id: 'force-open' }, 'Force open');
    const clear = h('button', { type: 'button', id: 'clear' }, 'Clear forced open');
    const reset = h('button', { type: 'button', id: 'reset' }, 'Reset breaker');
    const apply = h('button', { type: 'button', id: 'retune' }, 'Validate and retune');
    forceOpen.addEventListener('click', () => void this.#forceOpen());
    clear.addEventListener('click', () => void this.#act('DELETE', 'force-open', 'Forced open cleared'));
    reset.addEventListener('click', () => void this.#act('POST', 'reset', 'Breaker reset'));
    apply.addEventListener('click', () => void this.#retune());
    this.root = h(
      'section.detail',
      { 'aria-labelledby': 'detail-title' },
      h(
        'div.detail-head',
        {},
        back,
        h('h2', { id: 'detail-title', tabindex: '-1' }, `${e.policy} · ${routeLabel(e.route)}`),
        this.#badge,
      ),
      h(
        'div.detail-body',
        {},
        h('div', {}, this.#facts, h('h3', {}, 'Breaker history'), this.#history),
        h('div.charts', {}, ...this.#charts.map((c) => c.chart.root)),
      ),
      h(
        'section.actions',
        { 'aria-labelledby': 'actions-title' },
        h('h3', { id: 'actions-title' }, `Actions (${target})`),
        h(
          'div.fields',
          {},
          h('label', { for: 'ttl' }, 'TTL '),
          this.#ttl,
          h('label', { for: 'reason' }, 'Reason '),
          this.#reason,
          forceOpen,
          clear,
          reset,
        ),
        h(
          'p.note',
          {},
          'TTL and reason go with the force-open: it clears itself when the TTL ends, and the reason is kept in the ' +
            'audit trail. With a shared control store, every action reaches every replica.',
        ),
        this.#actionStatus,
      ),
      h(
        'section.retune',
        { 'aria-labelledby': 'retune-title' },
        h('h3', { id: 'retune-title' }, `Retune ${e.policy} (the whole policy, every route)`),
        h('label', { for: 'spec-editor' }, 'Policy spec (JSON)'),
        this.#editor,
        h('div.fields', {}, apply),
        this.#errors,
        this.#retuneStatus,
      ),
    );
    this.root.addEventListener('keydown', (ev) => {
      if (ev.key === 'Escape' && ev.target !== this.#editor) this.close();
    });
    this.update(row);
    void this.#loadSpec();
  }

  get key(): string {
    return this.row.key;
  }

  update(row: Row): void {
    this.row = row;
    const e = row.entry;
    text(this.#badge, stateName(e));
    this.#badge.className = `badge ${stateClass(e)}`;
    const facts: [string, string][] = [
      [
        'Breaker',
        stateName(e) +
          (e.breaker?.retryAfter !== undefined ? ` (may probe in ${ms(e.breaker.retryAfter)})` : ''),
      ],
      [
        'Failure ratio',
        e.breaker === undefined
          ? '–'
          : `${Math.round(e.breaker.failureRatio * 100)} % of ${e.breaker.calls} calls`,
      ],
      ['Calls/s', callsText(e)],
      ['Rejections/s', rejectionsText(e)],
      ['Bulkhead', bulkheadText(e)],
      ['Rate-limit tokens', tokensText(e)],
      ['Hedge delay', e.hedgeDelay === undefined ? '–' : ms(e.hedgeDelay)],
      [
        'Throttle',
        e.throttleRejectionProbability === undefined
          ? '–'
          : `${Math.round(e.throttleRejectionProbability * 100)} % rejected`,
      ],
      ['Latency', latencyText(e)],
      [
        'Store',
        e.localFallback === undefined ? 'ok' : `degraded: ${e.localFallback.join(', ')} (local state shown)`,
      ],
    ];
    this.#facts.replaceChildren(...facts.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
    this.#history.replaceChildren(
      ...(e.breakerHistory.length === 0
        ? [h('li', {}, 'no transitions since the dashboard began watching')]
        : [...e.breakerHistory]
            .reverse()
            .map((c) => h('li', {}, `${breakerWord(c.from)} → ${breakerWord(c.to)}, ${ago(c.ago)}`))),
    );
    for (const c of this.#charts) {
      c.chart.root.hidden = !c.when(row);
      if (!c.chart.root.hidden) c.chart.update(c.data(row));
    }
  }

  destroy(): void {
    for (const c of this.#charts) c.chart.destroy();
  }

  #path(action: string): string {
    return `/policies/${encodeURIComponent(this.row.entry.policy)}/${action}`;
  }

  async #forceOpen(): Promise<void> {
    const body: Record<string, string> = {};
    if (this.row.entry.route !== null) body['route'] = this.row.entry.route;
    if (this.#ttl.value.trim() !== '') body['ttl'] = this.#ttl.value.trim();
    if (this.#reason.value.trim() !== '') body['reason'] = this.#reason.value.trim();
    await this.#send('POST', this.#path('force-open'), body, 'Forced open');
  }

  async #act(method: string, action: string, done: string): Promise<void> {
    const route = this.row.entry.route;
    await this.#send(method, this.#path(action), route === null ? undefined : { route }, done);
  }

  async #send(
    method: string,
    path: string,
    body: Record<string, string> | undefined,
    done: string,
  ): Promise<void> {
    text(this.#actionStatus, 'Sending…');
    const empty = body === undefined || Object.keys(body).length === 0;
    const r = await api(method, path, empty ? undefined : body);
    text(this.#actionStatus, r.ok ? `${done}.` : describeFailure(r));
    this.#actionStatus.className = r.ok ? 'status ok' : 'status error';
  }

  async #loadSpec(): Promise<void> {
    const r = await api('GET', `/specs/${encodeURIComponent(this.row.entry.policy)}`);
    if (r.ok) this.#editor.value = JSON.stringify((r.body as { spec: unknown }).spec, null, 2);
    else text(this.#retuneStatus, `The current spec could not be read: ${describeFailure(r)}`);
  }

  async #retune(): Promise<void> {
    this.#errors.replaceChildren();
    this.#editor.removeAttribute('aria-invalid');
    let spec: unknown;
    try {
      spec = JSON.parse(this.#editor.value);
    } catch (error) {
      this.#showErrors([{ path: '(JSON)', constraint: `valid JSON: ${(error as Error).message}` }]);
      return;
    }
    text(this.#retuneStatus, 'Validating…');
    const r = await api('PUT', `/policies/${encodeURIComponent(this.row.entry.policy)}`, spec);
    if (r.ok) {
      text(this.#retuneStatus, 'Retuned: the server validated the spec and swapped the policy.');
      this.#retuneStatus.className = 'status ok';
      this.#editor.value = JSON.stringify((r.body as { spec: unknown }).spec, null, 2);
      return;
    }
    const violations = (r.body as { violations?: Violation[] } | undefined)?.violations ?? [];
    text(this.#retuneStatus, `Not retuned, nothing changed. ${describeFailure(r)}`);
    this.#retuneStatus.className = 'status error';
    this.#showErrors(violations);
  }

  #showErrors(violations: readonly Violation[]): void {
    if (violations.length > 0) this.#editor.setAttribute('aria-invalid', 'true');
    this.#errors.replaceChildren(
      ...violations.map((v) => {
        const at = h('button.path', { type: 'button', title: 'Show in the editor' }, v.path);
        at.addEventListener('click', () => {
          const span = locate(this.#editor.value, v.path);
          this.#editor.focus();
          if (span !== undefined) this.#editor.setSelectionRange(span[0], span[1]);
        });
        const got = 'value' in v ? `, got ${JSON.stringify(v.value)}` : '';
        return h('li', { 'data-path': v.path }, at, ` must be ${v.constraint}${got}`);
      }),
    );
  }
}
