// `npm run soak`: model-based interleavings over the real executor, policy spec and header fuzzing, and a
// cardinality run; writes RELIABILITY.md. `npm run soak -- --quick` is the slice `npm test` runs (fixed seed, fixed
// counts, about 20 s; never writes the file). Exits non-zero when any invariant breaks. Options:
//   --quick               the CI slice            --minutes=N   time box of a full run (default 4)
//   --seed=N              run seed (full runs pick one at random and print it; --quick uses 20261205)
//   --only=a,b            parts: interleavings, specs, headers, cardinality; and load-fault, run only when named
//                         (the demo fleet under load and faults, load-fault/load-fault.mjs; never in --quick)
//   --path=P / --case=I   replay one failing interleaving (with --seed) / one fuzz case
//   --workers=N           interleaving processes of a full run (default: one per core)
//   --runs=N              stop the interleavings at N runs (summed over the workers) if the time box allows
//   --write / --no-write  write RELIABILITY.md (default: full runs of every part write it, others do not)
//   --inject=NAME         a deliberate fault, to see a check fail: leak-listener, leak-timer, leak-slot, unhandled,
//                         drop-lease-record (interleavings), pollute, slow (specs), header-throw, unbounded
import { fork } from 'node:child_process';
import { randomInt } from 'node:crypto';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { canaries } from './canaries.mjs';
import { cardinality, GROWTH_BOUND } from './cardinality.mjs';
import { fuzzHeaders } from './fuzz-headers.mjs';
import { fuzzSpecs } from './fuzz-specs.mjs';
import { runInterleavings } from './interleavings.mjs';
import { processProblems } from './lib/probes.mjs';
import { writeReliability } from './lib/report.mjs';

const PARTS = ['interleavings', 'specs', 'headers', 'cardinality'];
/** Parts a run includes only when `--only` names them. */
const NAMED_ONLY = ['load-fault'];
const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(a);
    if (m === null) throw new Error(`unknown argument ${a} (see the head of tools/soak/src/soak.mjs)`);
    return [m[1], m[2] ?? true];
  }),
);
const quick = args.quick === true;
const seed = args.seed !== undefined ? Number(args.seed) | 0 : quick ? 20261205 : randomInt(2 ** 31);
const only = args.only === undefined ? PARTS : String(args.only).split(',');
for (const p of only)
  if (!PARTS.includes(p) && !NAMED_ONLY.includes(p)) throw new Error(`--only: unknown part ${p}`);
if (quick && only.includes('load-fault'))
  throw new Error('--quick never runs load-fault (see tools/soak/README.md)');
const inject = args.inject;
const started = Date.now();
const deadline = started + Number(args.minutes ?? 4) * 60_000;
const say = (s) => args.json || console.log(s);

// Counts: the quick slice is fixed (deterministic); a full run's fuzzers and cardinality have fixed counts too, and
// the interleavings fill the rest of the time box.
const SIZES = quick
  ? { specs: 8_000, headers: 10_000, routes: 40_000, runs: 1_000 }
  : { specs: 100_000, headers: 100_000, routes: 1_000_000, runs: Number(args.runs ?? Infinity) };

async function interleavings() {
  if (args.path !== undefined) {
    const r = await runInterleavings({ seed, replay: { seed, path: String(args.path) }, inject });
    return {
      ...summary(r.tally),
      problems: r.failure ? [failureText(r.failure)] : [],
      workers: 1,
      seconds: 0,
    };
  }
  const t0 = Date.now();
  const workers = quick || args.json ? 1 : Number(args.workers ?? os.cpus().length);
  if (workers === 1) {
    const until = args.until !== undefined ? Number(args.until) : quick ? Date.now() + 60_000 : deadline;
    const r = await runInterleavings({
      seed,
      until,
      maxRuns: SIZES.runs,
      inject,
      onProgress: (t) => args.json && process.send?.({ progress: t.runs }),
    });
    return {
      ...summary(r.tally),
      problems: r.failure ? [failureText(r.failure)] : [],
      workers,
      seconds: (Date.now() - t0) / 1000,
    };
  }
  // One child process per core, each from its own seed; a child that outlives the time box by a minute is hung.
  const results = await Promise.all(
    Array.from({ length: workers }, (_, w) =>
      child((seed + w * 7919) | 0, deadline, Math.ceil(SIZES.runs / workers)),
    ),
  );
  const total = {
    ...results[0],
    workers,
    seconds: (Date.now() - t0) / 1000,
    problems: results.flatMap((r) => r.problems),
  };
  for (const r of results.slice(1)) {
    for (const k of ['runs', 'calls', 'commands', 'faults', 'adminActions']) total[k] += r[k];
    for (const k of ['events', 'outcomes'])
      for (const [name, v] of Object.entries(r[k])) total[k][name] = (total[k][name] ?? 0) + v;
  }
  return total;
}

function child(workerSeed, until, runs) {
  return new Promise((resolve) => {
    const extra = [
      ...(inject === undefined ? [] : [`--inject=${inject}`]),
      ...(runs === Infinity ? [] : [`--runs=${runs}`]),
    ];
    const c = fork(
      fileURLToPath(import.meta.url),
      ['--only=interleavings', '--json', `--seed=${workerSeed}`, `--until=${until}`, ...extra],
      {
        stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
      },
    );
    let progress = 0;
    let out = '';
    c.stdout.on('data', (d) => (out += d));
    c.on('message', (m) => (progress = m.progress ?? progress));
    const watchdog = setTimeout(() => c.kill('SIGKILL'), until - Date.now() + 60_000);
    c.on('exit', (code, signal) => {
      clearTimeout(watchdog);
      try {
        resolve(JSON.parse(out.trim().split('\n').pop()).interleavings);
      } catch {
        resolve({
          runs: progress,
          calls: 0,
          commands: 0,
          faults: 0,
          adminActions: 0,
          events: {},
          outcomes: {},
          problems: [
            `worker seed ${workerSeed} ended with ${signal ?? `exit code ${code}`} after ${progress} runs (a hang if killed)`,
          ],
        });
      }
    });
  });
}

const summary = (t) => ({
  runs: t.runs,
  calls: t.calls,
  commands: t.commands,
  faults: t.faults,
  adminActions: t.adminActions,
  events: Object.fromEntries(t.events),
  outcomes: Object.fromEntries(t.outcomes),
});
const failureText = (f) =>
  `${f.message}\n  counterexample: ${f.counterexample.slice(0, 4000)}\n  replay: ${f.replay}`;

/** Paths the quick slice must have exercised, or its invariants could hold vacuously. */
const MUST_EXERCISE = [
  'attempt_timeout',
  'retry',
  'hedge_attempt',
  'circuit_open',
  'bulkhead_full',
  'bulkhead_queue_shed',
  'breaker_state',
  'half-open probe lease',
  'store_degraded',
  'resilience_store_unavailable',
  'resilience_forced_open',
  'control_applied',
  'fallback',
  'throttle_reject',
  'rate_limited',
  'chaos_injected',
  'shadow decision',
];
const MUST_SETTLE_AS = [
  'caller abort',
  'error deadline_exceeded',
  'value',
  'call fallback',
  'policy fallback',
];

function fuzzProblems(t) {
  return t.failures.map((f) => `case ${f.index} ${f.input}: ${f.problems.join('; ')} — replay: ${f.replay}`);
}

async function main() {
  const r = {
    seed,
    command: quick ? 'npm run soak -- --quick' : 'npm run soak',
    date: new Date().toISOString().slice(0, 10),
    growthBound: GROWTH_BOUND,
  };
  say(
    `soak: seed ${seed}${quick ? ' (quick slice)' : ''}; parts ${only.join(', ')}${inject ? `; injected fault: ${inject}` : ''}`,
  );
  const caseIndex = args.case === undefined ? undefined : Number(args.case);
  if (only.includes('specs')) {
    const t0 = Date.now();
    if (inject === 'pollute') Object.prototype.polluted = 'injected'; // eslint-disable-line no-extend-native
    const t = fuzzSpecs({ seed, cases: SIZES.specs, replayIndex: caseIndex, slow: inject === 'slow' });
    delete Object.prototype.polluted;
    r.specs = { ...t, problems: fuzzProblems(t) };
    say(
      `specs: ${t.cases} mutated specs (${t.valid} valid, ${t.configurationErrors} configuration errors), slowest parse ${t.slowestMs.toFixed(1)} ms, ${(Date.now() - t0) / 1000} s`,
    );
  }
  if (only.includes('headers')) {
    const t0 = Date.now();
    const t = await fuzzHeaders({
      seed,
      cases: SIZES.headers,
      replayIndex: caseIndex,
      throwing: inject === 'header-throw',
    });
    r.headers = { ...t, problems: fuzzProblems(t) };
    say(
      `headers: ${t.cases} hostile values (${t.budgetsAccepted} budgets accepted), slowest ${t.slowestMs.toFixed(1)} ms, ${(Date.now() - t0) / 1000} s`,
    );
  }
  if (only.includes('cardinality')) {
    const c = await cardinality({
      routes: SIZES.routes,
      ...(inject === 'unbounded' ? { maxKeysPerPolicy: 1e9 } : {}),
    });
    r.cardinality = c;
    say(
      `cardinality: ${c.routes} routes, ${c.keys} keys held (max ${c.limit}); heapUsed ${(c.before / 2 ** 20).toFixed(1)} → ${(c.full / 2 ** 20).toFixed(1)} (map full) → ${(c.after / 2 ** 20).toFixed(1)} MiB; ${c.seconds} s`,
    );
  }
  if (only.includes('interleavings')) {
    const il = await interleavings();
    if (quick && !inject && args.path === undefined) {
      for (const k of MUST_EXERCISE)
        if (!il.events[k])
          il.problems.push(`the runs never exercised ${k}: the invariants may hold vacuously`);
      for (const k of MUST_SETTLE_AS)
        if (!il.outcomes[k]) il.problems.push(`no call settled as '${k}': the invariants may hold vacuously`);
    }
    r.interleavings = il;
    say(
      `interleavings: ${il.runs} runs (${il.calls} calls, ${il.commands} commands, ${il.faults} store faults, ${il.adminActions} admin actions), ${il.workers} worker(s), ${il.seconds} s`,
    );
  }
  if (only.includes('load-fault')) {
    const { runLoadFault } = await import('./load-fault/load-fault.mjs');
    const { writeLoadFault } = await import('./lib/report-load-fault.mjs');
    r.loadFault = await runLoadFault({ seed, minutes: Number(args.minutes ?? 4), say });
    if (args['no-write'] === undefined) {
      writeLoadFault({ ...r.loadFault, date: r.date });
      say('wrote the load-fault section of RELIABILITY.md');
    }
  }
  if (
    args.path === undefined &&
    caseIndex === undefined &&
    !inject &&
    !args.json &&
    only.length === PARTS.length
  ) {
    const t0 = Date.now();
    r.canaries = await canaries({ seed, full: !quick });
    for (const c of r.canaries)
      say(
        `canary ${c.inject}: ${c.caught === undefined ? 'NOT CAUGHT' : `caught (${c.caught.split('\n')[0].slice(0, 90)})`}`,
      );
    say(`canaries: ${(Date.now() - t0) / 1000} s`);
  }
  const missed = (r.canaries ?? [])
    .filter((c) => c.caught === undefined)
    .map((c) => `canary: the injected fault ${c.inject} was not caught`);
  const late = processProblems.filter((p) => !(r.interleavings?.problems ?? []).some((q) => q.includes(p)));
  const problems = [
    ...['interleavings', 'specs', 'headers', 'cardinality', 'loadFault'].flatMap((p) =>
      (r[p]?.problems ?? []).map((x) => `${p}: ${x}`),
    ),
    ...late,
  ];
  r.seconds = (Date.now() - started) / 1000;
  if (args.json) {
    console.log(JSON.stringify(r));
    return;
  }
  const write =
    args.write === true ||
    (args['no-write'] === undefined &&
      !quick &&
      only.length === PARTS.length &&
      !inject &&
      caseIndex === undefined);
  if (write) {
    writeReliability(r);
    say('wrote RELIABILITY.md');
  }
  say(
    `soak: ${problems.length === 0 ? 'every invariant held' : `${problems.length} invariant(s) broken`} in ${r.seconds.toFixed(1)} s (seed ${seed})`,
  );
  for (const p of problems) console.error(`\n✗ ${p}`);
  process.exitCode = problems.length === 0 ? 0 : 1;
}

await main();
