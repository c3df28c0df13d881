import {
  ADAPTIVE_BULKHEAD_OPTION_KEYS,
  AdaptiveBulkheadStrategy,
} from '../strategies/adaptive-bulkhead-strategy';
import {
  ADAPTIVE_THROTTLE_OPTION_KEYS,
  AdaptiveThrottleStrategy,
} from '../strategies/adaptive-throttle-strategy';
import { BACKOFF_OPTION_KEYS } from '../strategies/backoff-strategy';
import { BULKHEAD_OPTION_KEYS, BulkheadStrategy } from '../strategies/bulkhead-strategy';
import {
  CHAOS_FAULT_KEYS,
  CHAOS_LATENCY_KEYS,
  CHAOS_OPTION_KEYS,
  ChaosStrategy,
} from '../strategies/chaos-strategy';
import { CIRCUIT_BREAKER_OPTION_KEYS, CircuitBreakerStrategy } from '../strategies/circuit-breaker-strategy';
import {
  DEFAULT_GRADIENT_WINDOW_TIME,
  GRADIENT_BULKHEAD_OPTION_KEYS,
  GradientBulkheadStrategy,
} from '../strategies/gradient-bulkhead-strategy';
import { HEDGE_OPTION_KEYS, HedgeStrategy } from '../strategies/hedge-strategy';
import { QUEUE_OPTION_KEYS } from '../strategies/queue-options';
import { RATE_LIMIT_OPTION_KEYS, RateLimitStrategy } from '../strategies/rate-limit-strategy';
import { BUDGET_OPTION_KEYS, type RetryBudget } from '../strategies/retry-budget';
import { RETRY_OPTION_KEYS, RetryStrategy } from '../strategies/retry-strategy';
import type { Strategy } from '../strategies/strategy';
import { TIMEOUT_OPTION_KEYS, TimeoutStrategy } from '../strategies/timeout-strategy';
import type {
  AdaptiveBulkheadOptions,
  AdaptiveThrottleOptions,
  BackoffOptions,
  BulkheadOptions,
  CircuitBreakerOptions,
  Duration,
  GradientBulkheadOptions,
  HedgeOptions,
  RateLimitOptions,
  RetryBudgetOptions,
  RetryableKind,
  StrategyType,
  TimeoutOptions,
} from '../strategies/types';
import { OptionsValidator } from '../validation/options-validator';
import { namedResultClassifier, resultClassifierNames } from '../errors/classify-result';
import { checkPolicyParts } from './policy-rules';
import { ResiliencePolicy } from './resilience-policy';
import { POLICY_MODES, type PolicyMode } from './policy-mode';

/**
 * The JSON form of a policy (SPEC §6, §11.15), for config files and the admin HTTP API:
 * `{ name, strategies: [{ type, ...constructor options }], hedge?: {...}, failOpenOnStoreError? }`. Durations are
 * numbers (ms) or strings (`'250ms'`); `retry.backoff` is a nested `{ base, max, multiplier?, jitter? }`;
 * `retry.budget` and `hedge.budget` are nested `{ ratio, minThroughput? }`.
 *
 * A chaos strategy's fault and outcome are data here (`{ rate, message }`, `{ rate, value }`); ones given as functions
 * in code are left out by `policyToSpec`.
 *
 * A **fallback cannot be expressed in JSON** (it is a function): `policyToSpec` leaves it out and `policyFromSpec`
 * rejects a `fallback` key. Attach a `FallbackStrategy` in code, or pass a per-call `fallback` to `run`.
 *
 * `policyFromSpec` is strict: unknown keys (a typo like `failureRaito`) and `null` values are violations, because a
 * silently ignored option is a production incident waiting to happen. Every violation, across all strategies, is
 * reported in one `configuration` / `invalid_policy` error whose paths point into the JSON
 * (`strategies[2].failureRatio must be in (0, 1], got 1.5`).
 */
export type BackoffSpec = BackoffOptions;
export type RetryBudgetSpec = RetryBudgetOptions;

export interface RetrySpec {
  type: 'retry';
  maxAttempts: number;
  backoff?: BackoffSpec;
  retryOn?: RetryableKind[];
  budget?: RetryBudgetSpec;
}

export type StrategySpec =
  | ({ type: 'rateLimit' } & RateLimitOptions)
  | ({ type: 'bulkhead' } & BulkheadOptions)
  | ({ type: 'adaptiveBulkhead' } & AdaptiveBulkheadOptions)
  | ({ type: 'gradientBulkhead' } & GradientBulkheadOptions)
  | ({ type: 'circuitBreaker' } & CircuitBreakerOptions)
  | ({ type: 'adaptiveThrottle' } & AdaptiveThrottleOptions)
  | RetrySpec
  | ({ type: 'timeout' } & TimeoutOptions)
  | ChaosSpec;

/**
 * The chaos strategy's JSON form (SPEC §14.3): its injections as data — a fault throws `new Error(message)`, an
 * outcome returns `value`.
 */
export interface ChaosSpec {
  type: 'chaos';
  enabled?: boolean;
  fault?: { rate: number; message?: string };
  latency?: { rate: number; delay: Duration };
  outcome?: { rate: number; value?: unknown };
}

export interface HedgeSpec extends HedgeOptions {
  budget?: RetryBudgetSpec;
}

export interface PolicySpec {
  name: string;
  strategies: StrategySpec[];
  hedge?: HedgeSpec;
  failOpenOnStoreError?: boolean;
  /** The name of a registered result classifier (`'http'` is built in; see `registerResultClassifier`). */
  classifyResult?: string;
  /** `'enforce'` (default) or `'shadow'` (SPEC §14.3). */
  mode?: PolicyMode;
}

const POLICY_KEYS = [
  'name',
  'strategies',
  'hedge',
  'failOpenOnStoreError',
  'classifyResult',
  'mode',
] as const;

interface StrategyKind {
  readonly keys: readonly string[];
  readonly build: (options: Record<string, unknown>) => Strategy;
}

/** Per JSON `type`: its option names and its constructor. */
const KINDS: Readonly<Record<StrategyType, StrategyKind>> = Object.freeze({
  rateLimit: { keys: RATE_LIMIT_OPTION_KEYS, build: (o) => new RateLimitStrategy(o as never) },
  bulkhead: { keys: BULKHEAD_OPTION_KEYS, build: (o) => new BulkheadStrategy(o as never) },
  adaptiveBulkhead: {
    keys: ADAPTIVE_BULKHEAD_OPTION_KEYS,
    build: (o) => new AdaptiveBulkheadStrategy(o as never),
  },
  gradientBulkhead: {
    keys: GRADIENT_BULKHEAD_OPTION_KEYS,
    build: (o) => new GradientBulkheadStrategy(o as never),
  },
  circuitBreaker: { keys: CIRCUIT_BREAKER_OPTION_KEYS, build: (o) => new CircuitBreakerStrategy(o as never) },
  adaptiveThrottle: {
    keys: ADAPTIVE_THROTTLE_OPTION_KEYS,
    build: (o) => new AdaptiveThrottleStrategy(o as never),
  },
  retry: { keys: RETRY_OPTION_KEYS, build: (o) => new RetryStrategy(o as never) },
  timeout: { keys: TIMEOUT_OPTION_KEYS, build: (o) => new TimeoutStrategy(o as never) },
  chaos: { keys: CHAOS_OPTION_KEYS, build: (o) => new ChaosStrategy(o as never) },
});

const TYPES = Object.keys(KINDS) as StrategyType[];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * `null` values of one JSON object's known keys are violations (JSON has no `undefined`: `null` must not read as
 * "use the default"). Unknown keys are the constructors' to report (`OptionsValidator.options`), in the same words.
 */
function checkNulls(
  v: OptionsValidator,
  path: string,
  o: Record<string, unknown>,
  known: readonly string[],
): void {
  for (const key of Object.keys(o))
    if (o[key] === null && known.includes(key))
      v.fail(path === '' ? key : `${path}.${key}`, 'a value, or absent (null is not accepted)', null);
}

function declaredType(entry: unknown): StrategyType | undefined {
  const type = isRecord(entry) ? entry['type'] : undefined;
  return typeof type === 'string' && (TYPES as string[]).includes(type) ? (type as StrategyType) : undefined;
}

function buildStrategy(v: OptionsValidator, path: string, entry: unknown): Strategy | undefined {
  if (!isRecord(entry)) {
    v.fail(path, 'a strategy object { type, ...options }', entry);
    return undefined;
  }
  const type = entry['type'];
  if (typeof type !== 'string' || !(TYPES as string[]).includes(type)) {
    v.fail(`${path}.type`, `one of ${TYPES.map((t) => `'${t}'`).join(', ')}`, type);
    return undefined;
  }
  const kind = KINDS[type as StrategyType];
  const { type: _type, ...options } = entry;
  checkNulls(v, path, options, kind.keys);
  if (type === 'retry') {
    // A function has no JSON form: refused here rather than passed to the constructor, which would accept it.
    if (options['delay'] !== undefined) {
      v.fail(
        `${path}.delay`,
        'absent: a delay function cannot be expressed in JSON (set it in code)',
        options['delay'],
      );
      delete options['delay'];
    }
    if (isRecord(entry['backoff'])) checkNulls(v, `${path}.backoff`, entry['backoff'], BACKOFF_OPTION_KEYS);
    if (isRecord(entry['budget'])) checkNulls(v, `${path}.budget`, entry['budget'], BUDGET_OPTION_KEYS);
  }
  if (type === 'chaos') chaosData(v, path, options);
  return v.nested(path, () => kind.build(options));
}

/**
 * A chaos entry's injections as data: `error` / `result` functions are refused (the constructor would accept them);
 * `null` is refused except as an outcome's `value` (a result of `null` is data).
 */
function chaosData(v: OptionsValidator, path: string, options: Record<string, unknown>): void {
  for (const [key, code] of [
    ['fault', 'error'],
    ['outcome', 'result'],
  ] as const) {
    const o = options[key];
    if (!isRecord(o) || o[code] === undefined) continue;
    const data = key === 'fault' ? 'message' : 'value';
    v.fail(
      `${path}.${key}.${code}`,
      `absent: a function cannot be expressed in JSON (give ${data})`,
      o[code],
    );
    const { [code]: _code, ...rest } = o;
    options[key] = rest;
  }
  const fault = options['fault'];
  const latency = options['latency'];
  const outcome = options['outcome'];
  if (isRecord(fault)) checkNulls(v, `${path}.fault`, fault, CHAOS_FAULT_KEYS);
  if (isRecord(latency)) checkNulls(v, `${path}.latency`, latency, CHAOS_LATENCY_KEYS);
  if (isRecord(outcome)) checkNulls(v, `${path}.outcome`, outcome, ['rate']);
}

function buildHedge(v: OptionsValidator, entry: unknown): HedgeStrategy | undefined {
  if (entry === undefined) return undefined;
  if (!isRecord(entry)) {
    v.fail('hedge', 'a hedge object { delay, maxAttempts, ... }', entry);
    return undefined;
  }
  const { type, ...rest } = entry;
  if (type !== undefined) v.check(type === 'hedge', 'hedge.type', "'hedge' or absent", type);
  checkNulls(v, 'hedge', rest, HEDGE_OPTION_KEYS);
  if (isRecord(rest['budget'])) checkNulls(v, 'hedge.budget', rest['budget'], BUDGET_OPTION_KEYS);
  return v.nested('hedge', () => new HedgeStrategy(rest as never));
}

/** Builds and validates a policy from its JSON form; all violations in one `invalid_policy` error. */
export function policyFromSpec(json: unknown): ResiliencePolicy {
  const name = isRecord(json) ? json['name'] : undefined;
  const named = typeof name === 'string' && name.trim() !== '';
  const v = new OptionsValidator('policy spec', {
    heading: named ? `Invalid policy spec '${name}'` : 'Invalid policy spec',
    ...(named ? { policy: name } : {}),
  });
  const o = v.object('', json);
  for (const key of Object.keys(o)) {
    if (key === 'fallback')
      v.fail(
        'fallback',
        'absent: a fallback is code and cannot be expressed in JSON (attach a FallbackStrategy in code)',
        o[key],
      );
    else if (!(POLICY_KEYS as readonly string[]).includes(key))
      v.fail(key, `a known policy field (${POLICY_KEYS.join(', ')})`, o[key]);
  }
  const raw = o['strategies'];
  const built = Array.isArray(raw)
    ? raw.map((entry: unknown, i) => buildStrategy(v, `strategies[${i}]`, entry))
    : raw;
  const hedge = buildHedge(v, o['hedge']);
  const declaredTypes = Array.isArray(raw) ? raw.map(declaredType) : undefined;
  const classifyResult = o['classifyResult'];
  if (
    classifyResult !== undefined &&
    !(typeof classifyResult === 'string' && namedResultClassifier(classifyResult))
  )
    v.fail(
      'classifyResult',
      `the name of a registered result classifier (${resultClassifierNames().join(', ')}; a function has no JSON form)`,
      classifyResult,
    );
  const mode = o['mode'];
  if (mode !== undefined && !POLICY_MODES.includes(mode as PolicyMode))
    v.fail('mode', `one of ${POLICY_MODES.map((m) => `'${m}'`).join(', ')}`, mode);
  checkPolicyParts(v, {
    name,
    strategies: built,
    fallback: undefined,
    hedge,
    failOpenOnStoreError: o['failOpenOnStoreError'],
    ...(declaredTypes === undefined ? {} : { declaredTypes }),
  });
  v.throwIfInvalid();
  return new ResiliencePolicy({
    name: name as string,
    strategies: built as Strategy[],
    hedge,
    ...(classifyResult === undefined ? {} : { classifyResult: classifyResult as string }),
    ...(o['mode'] === undefined ? {} : { mode: o['mode'] as PolicyMode }),
    ...(o['failOpenOnStoreError'] === undefined
      ? {}
      : { failOpenOnStoreError: o['failOpenOnStoreError'] as boolean }),
  });
}

/** Copies defined fields only: JSON has no `undefined`. */
function defined(record: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) if (value !== undefined) out[key] = value;
  return out;
}

function budgetSpec(budget: RetryBudget): RetryBudgetSpec {
  return { ratio: budget.options.ratio, minThroughput: budget.options.minThroughput };
}

function strategySpec(s: Strategy): StrategySpec {
  switch (s.type) {
    case 'retry': {
      const { maxAttempts, backoff, retryOn, budget } = s.options;
      return {
        type: 'retry',
        maxAttempts,
        backoff: { ...backoff.options },
        retryOn: [...retryOn],
        ...(budget === undefined ? {} : { budget: budgetSpec(budget) }),
      };
    }
    case 'bulkhead':
    case 'adaptiveBulkhead':
    case 'gradientBulkhead': {
      const out = defined(s.options);
      // Queue options are meaningless (and rejected) without a queue.
      if (s.options.maxQueue === 0)
        for (const key of QUEUE_OPTION_KEYS) if (key !== 'maxQueue') delete out[key];
      if (s.type === 'gradientBulkhead') {
        const o = s.options;
        if (o.initialLimit === o.maxConcurrency) delete out['initialLimit'];
        if (o.maxWindowTime === Math.max(DEFAULT_GRADIENT_WINDOW_TIME, o.minWindowTime))
          delete out['maxWindowTime'];
      }
      return { type: s.type, ...out } as StrategySpec;
    }
    case 'circuitBreaker': {
      const out = defined(s.options);
      // The multiplier means nothing (and is refused) without a cap.
      if (s.options.maxBreakDuration === undefined) delete out['breakDurationMultiplier'];
      return { type: s.type, ...out } as StrategySpec;
    }
    case 'rateLimit': {
      const out = defined(s.options);
      if (s.options.burst === s.options.permits) delete out['burst'];
      return { type: s.type, ...out } as StrategySpec;
    }
    case 'chaos':
      return chaosSpec(s);
    default:
      return { type: s.type, ...defined(s.options) } as StrategySpec;
  }
}

/** Injections given as functions in code have no JSON form: left out, like the fallback and a retry's `delay`. */
function chaosSpec(s: ChaosStrategy): ChaosSpec {
  const { enabled, fault, latency, outcome } = s.options;
  const spec: ChaosSpec = { type: 'chaos', enabled };
  if (fault?.message !== undefined) spec.fault = { rate: fault.rate, message: fault.message };
  if (latency !== undefined) spec.latency = { rate: latency.rate, delay: latency.delay };
  if (outcome !== undefined && outcome.result === undefined)
    spec.outcome =
      outcome.value === undefined ? { rate: outcome.rate } : { rate: outcome.rate, value: outcome.value };
  return spec;
}

/**
 * The JSON form of a policy: resolved options (durations in ms, defaults filled in), strategies in canonical order.
 * Options whose default is derived from another option are left out when they equal it (`burst` = `permits`,
 * `initialLimit` = `maxConcurrency`, `maxWindowTime` = max(1 s, `minWindowTime`)): an operator who edits the
 * exported JSON and changes `maxConcurrency` gets the limits that follow from it, not a stale copy the new value
 * contradicts.
 * The fallback is left out (see the file comment). `policyFromSpec(policyToSpec(p))` equals `p` otherwise.
 */
export function policyToSpec(policy: ResiliencePolicy): PolicySpec {
  const spec: PolicySpec = { name: policy.name, strategies: policy.strategies.map(strategySpec) };
  const hedge = policy.hedge;
  if (hedge !== undefined) {
    const { budget, ...rest } = hedge.options;
    spec.hedge = {
      ...(defined(rest) as unknown as HedgeOptions),
      ...(budget === undefined ? {} : { budget: budgetSpec(budget) }),
    };
  }
  spec.failOpenOnStoreError = policy.failOpenOnStoreError;
  // A classifier given as a bare function has no JSON form: left out, like the fallback.
  if (policy.classifyResultName !== undefined) spec.classifyResult = policy.classifyResultName;
  if (policy.mode !== 'enforce') spec.mode = policy.mode;
  return spec;
}
