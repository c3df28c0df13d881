// The Ballast dashboard (SPEC §14.2). Loaded by the shell at {path}/ui with a strict CSP: no inline code, no data in
// the shell; everything comes from the admin API with the token the operator enters (kept in sessionStorage).
import './style.css';
import { api, token } from './api';
import { DetailView } from './detail';
import { h, text } from './dom';
import { Model, type DashboardSnapshot } from './model';
import { Overview } from './overview';
import { LiveStream, type StreamStatus } from './stream';

const model = new Model();
let detail: DetailView | undefined;

const statusEl = h('p.connection', { role: 'status', id: 'connection', 'data-status': 'no token' });
const problemEl = h('p.problem', { role: 'alert', hidden: true });
const tokenInput = h('input', {
  type: 'password',
  id: 'token',
  autocomplete: 'off',
  placeholder: 'admin token',
});
const tokenForm = h(
  'form.token',
  { 'aria-label': 'Admin token' },
  h('label', { for: 'token' }, 'Admin token '),
  tokenInput,
  h('button', { type: 'submit', id: 'use-token' }, 'Use token'),
);
const forget = h('button', { type: 'button', id: 'forget-token' }, 'Forget token');
const replicas = h('section.replicas', { hidden: true, 'aria-labelledby': 'replicas-title' });
const main = h('main');

const overview = new Overview(model, (key) => openDetail(key));

function setStatus(status: StreamStatus, detailText?: string): void {
  statusEl.dataset['status'] = status;
  const words: Record<StreamStatus, string> = {
    'no token': 'Not connected: enter the admin token.',
    connecting: 'Connecting…',
    live: 'Live',
    reconnecting: 'Connection lost, reconnecting…',
    refused: 'Refused',
  };
  text(statusEl, words[status] + (detailText === undefined ? '' : `: ${detailText}. Enter the right token.`));
}

const stream = new LiveStream({
  status: setStatus,
  event(type, data) {
    if (type === 'snapshot') {
      problemEl.hidden = true;
      model.apply(data as DashboardSnapshot, Date.now());
      overview.update();
      if (detail !== undefined) {
        const row = model.rows.get(detail.key);
        if (row !== undefined) detail.update(row);
      }
    } else if (type === 'policy') {
      const e = data as { type: string; policy: string; route: string | null; to?: string };
      if (e.type === 'breaker_state' && e.to !== undefined) {
        const row = model.breakerChanged(e.policy, e.route, e.to);
        overview.update();
        if (row !== undefined && detail?.key === row.key) detail.update(row);
      }
    } else if (type === 'problem') {
      problemEl.hidden = false;
      text(problemEl, String((data as { message?: unknown }).message));
    }
  },
});

function openDetail(key: string): void {
  const row = model.rows.get(key);
  if (row === undefined) return;
  detail?.destroy();
  detail = new DetailView(row, closeDetail);
  main.replaceChildren(detail.root);
  detail.root.querySelector<HTMLElement>('#detail-title')?.focus();
}

function closeDetail(): void {
  detail?.destroy();
  detail = undefined;
  main.replaceChildren(overview.root);
  overview.update();
}

/** `id · control version N · seen 3 s ago`: which replicas listen, and whether one is behind the others. */
function replicaLine(x: unknown): string {
  if (typeof x !== 'object' || x === null) return String(x);
  const r = x as { id?: unknown; version?: unknown; lastSeen?: unknown };
  const parts = [String(r.id)];
  if (typeof r.version === 'number') parts.push(`control version ${r.version}`);
  if (typeof r.lastSeen === 'number')
    parts.push(`seen ${Math.max(0, Math.round((Date.now() - r.lastSeen) / 1000))} s ago`);
  return parts.join(' · ');
}

/** Replicas are shown when the server has a fleet control plane (`GET {path}/replicas` answers). */
async function loadReplicas(): Promise<void> {
  const r = await api('GET', '/replicas');
  if (!r.ok || typeof r.body !== 'object' || r.body === null) {
    replicas.hidden = true;
    return;
  }
  const body = r.body as { replicas?: unknown };
  const list = Array.isArray(body.replicas)
    ? body.replicas
    : Array.isArray(r.body)
      ? (r.body as unknown[])
      : [];
  replicas.replaceChildren(
    h('h2', { id: 'replicas-title' }, `Replicas (${list.length})`),
    h('ul', {}, ...list.map((x) => h('li', {}, replicaLine(x)))),
  );
  replicas.hidden = false;
}

function connect(): void {
  if (token.get() === null) {
    stream.stop();
    setStatus('no token');
    return;
  }
  stream.start();
  void loadReplicas();
}

tokenForm.addEventListener('submit', (e) => {
  e.preventDefault();
  const value = tokenInput.value.trim();
  if (value === '') return;
  token.set(value);
  tokenInput.value = '';
  connect();
});
forget.addEventListener('click', () => {
  token.clear();
  connect();
});

document
  .getElementById('app')!
  .replaceChildren(
    h('header', {}, h('h1', {}, 'Ballast'), statusEl, h('div.token-box', {}, tokenForm, forget)),
    problemEl,
    replicas,
    main,
  );
main.replaceChildren(overview.root);
connect();
