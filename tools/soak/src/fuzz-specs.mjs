// Policy spec fuzzing, in process: valid specs (every strategy type, hedge, budgets, a result classifier) mutated at
// random points with hostile values, removed and added keys, prototype-polluting payloads and deep nesting, parsed
// from JSON text as the admin API would (so `__proto__` arrives as an own key), plus some non-JSON values a JS
// caller could pass. Each parse must return a policy or throw a `configuration` ResilienceError, and nothing else;
// a policy must round-trip through policyToSpec; no prototype may change; each parse is timed.
import { performance } from 'node:perf_hooks';
import { core } from './lib/ballast.mjs';
import { prototypeProblems, prototypeSnapshot, rng } from './lib/fuzz-kit.mjs';

const { policyFromSpec, policyToSpec, ResilienceError, ResiliencePolicy } = core;

const SEEDS = [
  {
    name: 'orders',
    strategies: [
      { type: 'rateLimit', permits: 100, per: '1s', burst: 150 },
      {
        type: 'bulkhead',
        maxConcurrency: 10,
        maxQueue: 20,
        queueTarget: '5ms',
        queueInterval: '100ms',
        prioritized: true,
      },
      {
        type: 'circuitBreaker',
        failureRatio: 0.5,
        samplingWindow: '10s',
        minThroughput: 20,
        breakDuration: '5s',
        halfOpenMaxCalls: 2,
      },
      {
        type: 'retry',
        maxAttempts: 3,
        backoff: { base: 10, max: '1s', multiplier: 2, jitter: 'full' },
        retryOn: ['infrastructure'],
        budget: { ratio: 0.2, minThroughput: 10 },
      },
      { type: 'timeout', timeout: '250ms' },
    ],
    hedge: { delay: '50ms', maxAttempts: 2, budget: { ratio: 0.1 } },
    failOpenOnStoreError: false,
    classifyResult: 'http',
  },
  {
    name: 'search',
    strategies: [
      { type: 'adaptiveThrottle', k: 2, window: '2m', minThroughput: 10 },
      {
        type: 'adaptiveBulkhead',
        latencyThreshold: '80ms',
        maxConcurrency: 50,
        minConcurrency: 2,
        maxQueue: 5,
        backoffRatio: 0.9,
        cooldown: '1s',
        latencyQuantile: 0.9,
      },
      { type: 'timeout', timeout: 1000 },
    ],
    hedge: { delay: 20, maxAttempts: 3, adaptiveDelayQuantile: 0.95, delayMin: '5ms', delayMax: '200ms' },
  },
  {
    name: 'feed',
    strategies: [
      {
        type: 'gradientBulkhead',
        maxConcurrency: 64,
        minConcurrency: 4,
        maxQueue: 8,
        rttTolerance: 2,
        smoothing: 0.2,
        queueAdaptiveLifo: true,
      },
      { type: 'retry', maxAttempts: 2 },
    ],
  },
  { name: 'bare', strategies: [] },
];

const HOSTILE = [
  null,
  true,
  false,
  0,
  -0,
  -1,
  1,
  0.5,
  1e308,
  -1e308,
  5e-324,
  2 ** 53,
  2 ** 53 + 2,
  4294967296,
  '',
  ' ',
  '0',
  '-1s',
  '1e309ms',
  '1.5s',
  '2m',
  '1h',
  '250 ms',
  '5MS',
  'NaN',
  'Infinity',
  '-Infinity',
  '١٢ms',
  '0x10',
  '1_000',
  '1e3',
  '\u0000',
  '\ud800',
  'retry',
  'bulkhead',
  'hedge',
  'http',
  'constructor',
  '__proto__',
  'toString',
  'x'.repeat(10_000),
  '9'.repeat(400),
  [],
  [1, 2],
  {},
  { type: 'timeout' },
  { __proto__: null },
  [[[[]]]],
];
const KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'valueOf',
  'hasOwnProperty',
  'type',
  'name',
  'strategies',
  'hedge',
  'fallback',
  'failureRaito',
  'maxConcurency',
  'delay',
  'budget',
  'backoff',
  'retryOn',
  'classifyResult',
  '',
];
/** Payloads that pollute a prototype if a parser merges them naively. */
const POLLUTERS = [
  '{"__proto__":{"polluted":"yes"}}',
  '{"constructor":{"prototype":{"polluted":"yes"}}}',
  '{"__proto__":{"__proto__":{"polluted":"yes"}}}',
];
const NON_JSON = [
  NaN,
  Infinity,
  -Infinity,
  undefined,
  10n,
  Symbol('s'),
  () => 1,
  new Date(0),
  /re/,
  new Map(),
  new Proxy({}, {}),
];

/** An own, enumerable key (plain assignment to `__proto__` would set the prototype instead). */
function put(node, key, value) {
  Object.defineProperty(node, key, { value, enumerable: true, writable: true, configurable: true });
}

function clone(v) {
  return v === undefined ? undefined : JSON.parse(JSON.stringify(v));
}

/** The containers (objects and arrays) of a tree, to depth 12 (below that is the deep-nesting mutation's own). */
function containers(node, depth = 0, out = []) {
  if (node !== null && typeof node === 'object' && depth < 12) {
    out.push({ node });
    for (const v of Object.values(node)) containers(v, depth + 1, out);
  }
  return out;
}

/** One spec mutated 1–4 times; returns JSON text (or a JS value, for the non-JSON mutations). */
export function mutate(random) {
  const spec = clone(SEEDS[Math.floor(random() * SEEDS.length)]);
  let root = spec;
  let text;
  const n = 1 + Math.floor(random() * 4);
  let jsValue;
  for (let m = 0; m < n; m++) {
    const all = containers(root);
    if (all.length === 0) break; // the root itself was replaced by a scalar
    const { node } = all[Math.floor(random() * all.length)];
    const keys = Object.keys(node);
    const key = keys.length > 0 ? keys[Math.floor(random() * keys.length)] : '0';
    const r = random();
    if (r < 0.35) put(node, key, clone(HOSTILE[Math.floor(random() * HOSTILE.length)]));
    else if (r < 0.5) delete node[key];
    else if (r < 0.65)
      put(
        node,
        KEYS[Math.floor(random() * KEYS.length)],
        clone(HOSTILE[Math.floor(random() * HOSTILE.length)]),
      );
    else if (r < 0.72) put(node, key, JSON.parse(POLLUTERS[Math.floor(random() * POLLUTERS.length)]));
    else if (r < 0.78) {
      // deep nesting: a parser that recurses must not overflow the stack with anything but a configuration error
      const depth = 1 + Math.floor(random() * 20_000);
      text = `${'['.repeat(depth)}${']'.repeat(depth)}`;
      put(node, key, '@@deep@@');
    } else if (r < 0.85 && Array.isArray(root.strategies))
      root.strategies.push(clone(root.strategies[0] ?? { type: 'timeout', timeout: 1 }));
    else if (r < 0.92) {
      // a number as its string, a string as its number (durations are both; counts must be numbers)
      const v = node[key];
      if (typeof v === 'number') put(node, key, String(v));
      else if (typeof v === 'string') put(node, key, Number(v));
    } else if (r < 0.97) jsValue = NON_JSON[Math.floor(random() * NON_JSON.length)];
    else root = clone(HOSTILE[Math.floor(random() * HOSTILE.length)]);
  }
  let json = JSON.stringify(root) ?? 'null';
  if (text !== undefined) json = json.replace('"@@deep@@"', text);
  const parsed = JSON.parse(json);
  const all = containers(parsed);
  if (jsValue !== undefined && all.length > 0) {
    const { node } = all[Math.floor(random() * all.length)];
    const keys = Object.keys(node);
    put(node, keys.length > 0 ? keys[Math.floor(random() * keys.length)] : 'extra', jsValue);
  }
  return { json, input: parsed };
}

function busy(ms) {
  const end = performance.now() + ms;
  while (performance.now() < end);
  return [];
}

/** One case: the violations it shows (empty when it held) and how long the parse took. */
function runCase(input) {
  const problems = [];
  const t0 = performance.now();
  let policy;
  try {
    policy = policyFromSpec(input);
  } catch (e) {
    if (!(e instanceof ResilienceError) || e.kind !== 'configuration')
      problems.push(`threw ${e?.constructor?.name}: ${String(e?.message).slice(0, 200)}`);
  }
  const ms = performance.now() - t0;
  if (policy !== undefined) {
    if (!(policy instanceof ResiliencePolicy))
      problems.push('returned something other than a ResiliencePolicy');
    else {
      try {
        const spec = policyToSpec(policy);
        const again = policyToSpec(policyFromSpec(JSON.parse(JSON.stringify(spec))));
        if (JSON.stringify(again) !== JSON.stringify(spec)) problems.push('policyToSpec does not round-trip');
      } catch (e) {
        problems.push(`round trip threw ${e?.constructor?.name}: ${String(e?.message).slice(0, 200)}`);
      }
    }
  }
  return { problems, ms, ok: policy !== undefined };
}

/** Runs `cases` mutated specs from `seed`; a violation names the case's seed and index, which replay it. */
export function fuzzSpecs({ seed, cases, until = Infinity, replayIndex, slow = false }) {
  const protos = prototypeSnapshot();
  const tally = {
    cases: 0,
    valid: 0,
    configurationErrors: 0,
    slowestMs: 0,
    slowestCase: undefined,
    failures: [],
  };
  for (let i = replayIndex ?? 0; i < (replayIndex === undefined ? cases : replayIndex + 1); i++) {
    if (i % 1000 === 0 && Date.now() > until) break;
    const random = rng(seed, i);
    const { json, input } = mutate(random);
    // --inject=slow: one parse made to take 1.1 s, as a pathological input would
    const { problems, ms, ok } = runCase(
      slow && i === 3 ? new Proxy({}, { ownKeys: () => busy(1100) }) : input,
    );
    tally.cases++;
    if (ok) tally.valid++;
    else tally.configurationErrors++;
    if (ms > tally.slowestMs) Object.assign(tally, { slowestMs: ms, slowestCase: i });
    if (ms > 1000) problems.push(`parse took ${ms.toFixed(0)} ms`);
    problems.push(...prototypeProblems(protos));
    if (problems.length > 0 && tally.failures.length < 5)
      tally.failures.push({
        index: i,
        input: json.slice(0, 300),
        problems,
        replay: `npm run soak -- --only=specs --seed=${seed} --case=${i}`,
      });
  }
  return tally;
}
