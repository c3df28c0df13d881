// RELIABILITY.md: written whole by a full `npm run soak` (or any run given --write), from the figures of that run,
// but for the load-fault section (lib/report-load-fault.mjs), which it keeps as it is.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './ballast.mjs';

/** The load-fault section (lib/report-load-fault.mjs) sits between these markers; a full run keeps it as it is. */
export const BEGIN =
  '<!-- load-fault: written by `npm run soak -- --only=load-fault`; a full soak keeps it -->';
export const END = '<!-- load-fault: end -->';
const FILE = path.join(ROOT, 'RELIABILITY.md');

/** The section's current text in RELIABILITY.md (markers included), or '' when there is none. */
export function currentSection(text = fs.existsSync(FILE) ? fs.readFileSync(FILE, 'utf8') : '') {
  const a = text.indexOf(BEGIN);
  const b = text.indexOf(END);
  return a >= 0 && b > a ? text.slice(a, b + END.length) : '';
}

const n = (x) => x.toLocaleString('en-US');
const mib = (b) => `${(b / 2 ** 20).toFixed(1)} MiB`;
const ms = (x) => `${x.toFixed(1)} ms`;

export function machine() {
  const cpu = os.cpus()[0]?.model?.trim() ?? 'unknown cpu';
  const load = os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join('/');
  return `Node ${process.version}, ${os.cpus().length} × ${cpu}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, loadavg ${load} at the end (the machine is shared: counts per second scale with what else runs)`;
}

function held(problems) {
  return problems.length === 0 ? '**held**' : `**FAILED**: ${problems.join('; ')}`;
}

/** The whole file, from one run's results (`r`: what soak.mjs gathered). */
export function reliabilityMarkdown(r) {
  const il = r.interleavings;
  const sp = r.specs;
  const hd = r.headers;
  const cd = r.cardinality;
  const lines = [
    '# Reliability',
    '',
    `Written by \`${r.command}\` (tools/soak) on ${r.date}: ${machine()}; ${Math.round(r.seconds)} s of wall time,`,
    `run seed **${r.seed}**. Every figure below comes from that run; rerun it with \`npm run soak -- ${r.command.endsWith('--quick') ? '--quick ' : ''}--seed=${r.seed}\``,
    '(the interleaving counts depend on the time box, so a replay covers the same cases in the same order as far as it gets).',
    "`npm run soak -- --quick` is the slice `npm test` runs (the project's `test` target): the same checks at a smaller",
    'scale, from a fixed seed (about 12 s of CPU; 15–30 s of wall time here, by load); it never rewrites this file (a',
    'full run does, or any run given `--write`).',
    '',
    '## Interleavings (model-based, fast-check commands over the real executor)',
    '',
    'Each run builds a `Resilience` on a `FakeClock` with two policies — rate limit → bulkhead (with queue, CoDel or',
    'priorities) → circuit breaker → retry → timeout, with a hedge and a policy fallback; and adaptive throttle →',
    'adaptive (AIMD) or gradient bulkhead → retry → timeout — and stores (breaker, rate limit, latency digest) that',
    'throw or reject at random points, with `failOpenOnStoreError` true or false. fast-check then interleaves calls',
    '(random outcomes, durations, functions that ignore their signal, deadlines, criticality, per-call fallbacks,',
    'hedging on or off), clock steps, caller aborts (at timer boundaries and between microtasks), `admin.retune`,',
    '`admin.forceOpen` / `clearForcedOpen`, `admin.setMode` (shadow ↔ enforce), `admin.setChaos` (fault, latency and',
    'outcome injections switched on and off) and changes of the store fault rate.',
    '',
    `| runs (interleavings) | calls | commands | store faults injected | admin actions | workers | time |`,
    '|---|---|---|---|---|---|---|',
    `| ${n(il.runs)} | ${n(il.calls)} | ${n(il.commands)} | ${n(il.faults)} | ${n(il.adminActions)} | ${il.workers} | ${Math.round(il.seconds)} s |`,
    '',
    `Target 10⁶ runs: ${il.runs >= 1e6 ? 'reached' : `not reached in this time box (${n(il.runs)}; \`--minutes=N\` runs longer)`}.`,
    '',
    'Invariants, checked after every run once its calls have settled:',
    '',
    '- every call settled exactly once, and its per-call fallback ran at most once;',
    '- a call aborted by its caller while pending settled before the clock moved; none outlived its deadline;',
    '- one `call` event per call;',
    '- no Ballast timer pending once the calls settled, and none on the FakeClock after `runAll()`;',
    '- no abort listener left on any caller signal;',
    '- every bulkhead slot released exactly once (in use 0, waiting 0, no over-release, none admitted over the limit),',
    '  in the runtime and in `admin.inspect()`;',
    '- every half-open probe lease reported exactly once at the breaker store port, no admission reported twice;',
    '- admin actions fail only with a ResilienceError;',
    '- no unhandled rejection and no process warning.',
    '',
    `Result: ${held(il.problems)}.`,
    '',
    'What the runs exercised (events and call outcomes, summed):',
    '',
    `> ${Object.entries(il.events)
      .sort()
      .map(([k, v]) => `${k} ${n(v)}`)
      .join(' · ')}`,
    '',
    `> ${Object.entries(il.outcomes)
      .sort()
      .map(([k, v]) => `${k} ${n(v)}`)
      .join(' · ')}`,
    '',
    '## Policy spec fuzzing',
    '',
    'Valid specs (every strategy type, hedges, budgets, a result classifier) mutated 1–4 times at random points:',
    'hostile values (negative, huge, fractional, unit-less and malformed durations, NaN-like strings, unicode digits,',
    '10 kB strings), removed and added keys (`__proto__`, `constructor`, typos), prototype-polluting payloads parsed',
    'from JSON text, nesting up to 20,000 deep, strategies duplicated, and some non-JSON values (NaN, BigInt, symbols,',
    'functions, proxies). Each must give a policy or a `configuration` ResilienceError, nothing else; a policy must',
    'round-trip through `policyToSpec`; no built-in prototype may gain a key.',
    '',
    '| cases | valid | configuration errors | slowest parse | result |',
    '|---|---|---|---|---|',
    `| ${n(sp.cases)} | ${n(sp.valid)} | ${n(sp.configurationErrors)} | ${ms(sp.slowestMs)} (case ${sp.slowestCase}) | ${held(sp.problems)} |`,
    '',
    '## Header fuzzing',
    '',
    "Hostile values of the inbound deadline budget and criticality headers through the NestJS interceptor's path",
    '(`requestHeader` → `parseBudget` / `parseCriticality` → the deadline and criticality bound for the handler),',
    'of `grpc-timeout` (`parseGrpcTimeout`) and of `Retry-After` (`retryAfterOf`, plain headers and fetch `Headers`):',
    'near-valid numbers, glued fragments (signs, exponents, units, unicode spaces and digits, level names, dates),',
    'random UTF-16, and runs of one character up to 100,000 long. Each parser must return a value in its range or',
    '"absent", never throw; an accepted budget must bind a deadline within it.',
    '',
    '| values | budgets accepted | slowest value (all parsers) | result |',
    '|---|---|---|---|',
    `| ${n(hd.cases)} | ${n(hd.budgetsAccepted)} | ${ms(hd.slowestMs)} (case ${hd.slowestCase}) | ${held(hd.problems)} |`,
    '',
    '## Cardinality',
    '',
    'Distinct routes, one call each, through one policy whose strategies all keep per-route state (rate limit,',
    'bulkhead, breaker, timeout; one route in 64 fails). heapUsed after `global.gc()`:',
    '',
    '| routes | maxKeysPerPolicy | keys held at the end | heap before | heap when the map filled (20,000 routes) | heap at the end | growth after filling | time |',
    '|---|---|---|---|---|---|---|---|',
    `| ${n(cd.routes)} | ${n(cd.limit)} | ${n(cd.keys)} | ${mib(cd.before)} | ${mib(cd.full)} | ${mib(cd.after)} | ${mib(cd.after - cd.full)} | ${cd.seconds.toFixed(1)} s |`,
    '',
    `Bound: growth after filling ≤ ${mib(r.growthBound)}. Result: ${held(cd.problems)}.`,
    '',
    '## Can the checks fail? (canaries)',
    '',
    'Every run of all parts (this one and each quick slice) then injects one deliberate fault per check (`--inject=<name>`',
    'does the same by hand) and fails unless the harness reports it:',
    '',
    '| injected fault | reported as |',
    '|---|---|',
    ...(r.canaries ?? []).map(
      (c) =>
        `| \`${c.inject}\` | ${c.caught === undefined ? '**NOT CAUGHT**' : c.caught.split('\n')[0].replaceAll('|', '\\|').slice(0, 120)} |`,
    ),
    '',
    '## Replaying a failure',
    '',
    'A failing case prints its seed and path: `npm run soak -- --only=interleavings --seed=<s> --path=<p>` replays one',
    'interleaving (the first failing case, printed whole: the soak does not spend its time box shrinking); `npm run soak -- --only=specs',
    '--seed=<s> --case=<i>` (or `--only=headers`) replays one fuzz case.',
    '',
  ];
  return lines.join('\n');
}

export function writeReliability(r) {
  const kept = currentSection();
  fs.writeFileSync(FILE, kept === '' ? reliabilityMarkdown(r) : `${reliabilityMarkdown(r)}\n${kept}\n`);
}
