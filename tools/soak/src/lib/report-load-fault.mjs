// The load-fault section of RELIABILITY.md: written by `npm run soak -- --only=load-fault` between two markers, so
// a full `npm run soak` (which rewrites the rest of the file) keeps it, and this run rewrites only it.
import fs from 'node:fs';
import path from 'node:path';
import { FAULTS } from '../load-fault/faults.mjs';
import { BOUNDS } from '../load-fault/verdicts.mjs';
import { ROOT } from './ballast.mjs';
import { BEGIN, END, currentSection, machine } from './report.mjs';

const FILE = path.join(ROOT, 'RELIABILITY.md');

const n = (x) => Math.round(x).toLocaleString('en-US');
const ms = (x) => (x === undefined ? '–' : `${x.toFixed(0)} ms`);
const s1 = (x) => (x === undefined ? '**not converged**' : `${x.toFixed(0)} s`);
const mib = (b) => (b === undefined ? '–' : `${(b / 2 ** 20).toFixed(1)} MiB`);
const cell = (x) => String(x).replaceAll('|', '\\|');

function outcomes(o = {}) {
  return Object.entries(o)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${n(v)}`)
    .join(' · ');
}

export function loadFaultMarkdown(r) {
  const held =
    r.problems.length === 0
      ? '**held**'
      : `**FAILED** (${r.problems.length}): ${r.problems.map(cell).join('; ')}`;
  const kinds = Object.keys(FAULTS);
  return [
    BEGIN,
    '## Load and faults (the demo fleet under autocannon)',
    '',
    `Written by \`npm run soak -- --only=load-fault --minutes=${r.minutes}\` on ${r.date}: ${machine()}. Run seed`,
    `**${r.seed}**: \`npm run soak -- --only=load-fault --seed=${r.seed}\` replays the same fault schedule (kinds, order and`,
    'durations); the load itself is real traffic, so timings differ from run to run.',
    '',
    'Two replicas of the demo (`apps/demo/dist`, `REDIS_URL` set: breaker, rate limit and control plane fleet-wide)',
    "share a redis-server of the run's own, reached through a TCP proxy of the harness; a load balancer of the",
    'harness (round robin, keep-alive) sits in front of them and judges every answer. autocannon drives',
    '`GET /products` (policy `public-api`, a fleet rate limit) and `GET /products/anchor-01` (policy `inventory`:',
    'breaker + retry + timeout, breaker state on Redis) alternately on each connection. All of it, autocannon',
    "included, shares the machine's cores.",
    '',
    `**Capacity**, measured first the same way (${r.connections / 2} connections, closed loop, 10 s, rate limit`,
    `retuned out of the way): **${n(r.capacity)} req/s** (p99 ${ms(r.capacityP99)}). **The load**: \`overallRate\``,
    `${n(2 * r.capacity)} req/s (twice that) over ${r.connections} connections for ${n(r.seconds)} s. autocannon is`,
    `closed-loop per connection, so the fleet answered what it could (${n(r.achieved)} req/s on average) and the`,
    'excess waited at the client: the latencies below include that queueing. `public-api` was retuned fleet-wide',
    `to **${r.rate} per second** (a tenth of capacity, so the limit always binds).`,
    '',
    "The rule for every request: an **answer** is a 2xx, one of Ballast's own coded refusals (429/503/504 whose",
    'body `code` is a core `ErrorCode` refusal: `rate_limited`, `circuit_open`, `attempt_timeout`, …) or the',
    "backend's own 502 passed through (`Inventory backend error`). A **failure** is anything else: a request not",
    `answered within ${BOUNDS.hangSeconds} s (a hang, autocannon's timeout), a socket error at the client, a`,
    'socket error between the balancer and a replica (answered 599), or any other status or body (a 5xx without',
    "a Ballast code). **Converged** after a fault's heal: the first window of",
    `${BOUNDS.windowSeconds} whole seconds in which the fleet's accepted rate on \`/products\` is within`,
    `±${BOUNDS.rateTolerance * 100} % of ${r.rate}/s (with at least 1.5× that many asking), and, for the breaker,`,
    `every replica reports \`inventory\` closed and not forced open, no stock read is refused \`circuit_open\` and`,
    `at least ${BOUNDS.minSkuPerSecond} per second are answered; the recovery time is from the heal to that`,
    `window's start (1 s resolution; it must come within ${BOUNDS.convergeSeconds} s). **Heap flat**: each replica`,
    'runs a full GC and samples heapUsed every 5 s (a preload, `load-fault/heap-probe.cjs`); after its first',
    `${BOUNDS.heapWarmupSeconds} s, the median of its last 4 samples may exceed that of its first 4 by at most`,
    `${mib(BOUNDS.heapGrowthBytes)}.`,
    '',
    '### Faults',
    '',
    ...kinds.map((k) => `- \`${k}\` (${r.faults.filter((f) => f.kind === k).length}×): ${FAULTS[k].what}.`),
    '',
    '| # | fault | at | lasted | answers during | accepted /products during | p99 before → during → after | rate limit converged | breaker converged | failures |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...r.faults.map(
      (f, i) =>
        `| ${i + 1} | \`${f.kind}\` ${cell(JSON.stringify(f.params))} | ${n(f.at)} s | ${(f.healAt - f.at).toFixed(1)} s | ${n(f.answers)} | ${f.acceptedDuring.toFixed(0)}/s | ${ms(f.p99Before)} → ${ms(f.p99During)} → ${ms(f.p99After)} | ${s1(f.rateS)} | ${s1(f.breakerS)} | ${f.failures.length === 0 ? '0' : cell(f.failures.join('; '))} |`,
    ),
    '',
    'What was answered during each fault (refusal codes by count; `sku` = the stock reads):',
    '',
    ...r.faults.map((f, i) => `${i + 1}. \`${f.kind}\`: ${outcomes(f.codes)}`),
    '',
    '### The whole run',
    '',
    `Answers (all of the run before the canaries): \`/products\`: ${outcomes(r.answers.list)}; \`/products/anchor-01\`:`,
    `${outcomes(r.answers.sku)}. p99 at the balancer ${ms(r.p99)}, at the client ${ms(r.clientP99)}. Requests the`,
    `balancer sent again after Node's keep-alive race (a replica closed an idle pooled socket as the request was`,
    `written on it; the request never reached it): ${r.retries}.`,
    '',
    '| replica process | heap samples after warm-up | first → last (medians of 4, after GC) | growth | span |',
    '|---|---|---|---|---|',
    ...r.heap.map(
      (h) =>
        `| ${h.replica} | ${h.samples ?? 0} | ${mib(h.first)} → ${mib(h.last)} | ${mib(h.growth)} | ${n(h.span)} s |`,
    ),
    '',
    `Result: ${held}.`,
    '',
    '### Can these checks fail? (canaries, in the same fleet under the same load, after the schedule)',
    '',
    '| injected fault | reported as |',
    '|---|---|',
    ...r.canaries.map(
      (c) => `| ${cell(c.inject)} | ${c.caught === undefined ? '**NOT CAUGHT**' : cell(c.caught)} |`,
    ),
    '',
    `What the replicas logged (warnings and errors; ${r.warnings.length} line(s), the first 8):`,
    '',
    '```',
    ...(r.warnings.length === 0 ? ['(nothing)'] : r.warnings.slice(0, 8)),
    '```',
    END,
  ].join('\n');
}

/** Replaces (or appends) the section in RELIABILITY.md, leaving the rest of the file as it is. */
export function writeLoadFault(r) {
  const text = fs.existsSync(FILE) ? fs.readFileSync(FILE, 'utf8') : '# Reliability\n';
  const old = currentSection(text);
  const section = loadFaultMarkdown(r);
  const next = old === '' ? `${text.trimEnd()}\n\n${section}\n` : text.replace(old, () => section);
  fs.writeFileSync(FILE, next);
}
