import { OptionsValidator, type NumberRule } from '../validation/options-validator';
import type { Duration } from './types';

/**
 * Chaos engineering (SPEC §14.3; Polly v8's `AddChaosFault` / `AddChaosLatency` / `AddChaosOutcome`): injects
 * faults, latency and substitute results into a fraction of attempts, so that the rest of the policy — retry,
 * breaker, timeout, fallback — and the callers above it can be watched coping with them before production does it
 * for you. Off unless `enabled`; `admin.setChaos` switches it at run time.
 */

/** A fault: the attempt fails without calling the function. */
export interface ChaosFaultOptions {
  /** Share of attempts, in [0, 1]. */
  rate: number;
  /** Builds what the attempt throws; called once per injected fault. Code only (a JSON spec gives `message`). */
  error?: () => unknown;
  /**
   * The data form: the attempt throws `new Error(message)` — a plain `Error`, which `classify` calls `internal`
   * (SPEC §5 names no chaos code). Default {@link DEFAULT_CHAOS_FAULT_MESSAGE}. Not with `error`.
   */
  message?: string;
}

/** Latency: the attempt waits `delay` on the `Resilience` clock, then calls the function. */
export interface ChaosLatencyOptions {
  rate: number;
  /** ≥ 0, finite. The attempt's timeout and its signal (caller abort, deadline, lost hedge) cut it short. */
  delay: Duration;
}

/** An outcome: the attempt succeeds with a substitute result without calling the function. */
export interface ChaosOutcomeOptions {
  rate: number;
  /** Builds the result; called once per injected outcome. Code only (a JSON spec gives `value`). */
  result?: () => unknown;
  /** The data form: the attempt succeeds with this value (the same value each time). Not with `result`. */
  value?: unknown;
}

export interface ChaosOptions {
  /** Default `false`: a chaos strategy is inert until switched on (here, or at run time by `admin.setChaos`). */
  enabled?: boolean;
  fault?: ChaosFaultOptions;
  latency?: ChaosLatencyOptions;
  outcome?: ChaosOutcomeOptions;
}

/** A resolved fault: `error` when given in code, else `message` (the data form). */
export interface ResolvedChaosFault {
  readonly rate: number;
  readonly error: (() => unknown) | undefined;
  readonly message: string | undefined;
}

export interface ResolvedChaosLatency {
  readonly rate: number;
  readonly delay: number;
}

/** A resolved outcome: `result` when given in code, else `value` (the data form). */
export interface ResolvedChaosOutcome {
  readonly rate: number;
  readonly result: (() => unknown) | undefined;
  readonly value: unknown;
}

/** Chaos settings: a strategy's options, and the run-time settings an operator changes (admin/chaos-settings.ts). */
export interface ResolvedChaosOptions {
  readonly enabled: boolean;
  readonly fault: ResolvedChaosFault | undefined;
  readonly latency: ResolvedChaosLatency | undefined;
  readonly outcome: ResolvedChaosOutcome | undefined;
}

/**
 * The chaos settings of a policy as JSON (`inspect`, `GET /state`). An injection given as a function in code has no
 * JSON form: it shows its rate and `custom: true`.
 */
export interface ChaosSettingsView {
  readonly enabled: boolean;
  readonly fault?: { readonly rate: number; readonly message?: string; readonly custom?: true };
  readonly latency?: { readonly rate: number; readonly delay: number };
  readonly outcome?: { readonly rate: number; readonly value?: unknown; readonly custom?: true };
}

/** What an injected fault throws when neither `error` nor `message` is given. */
export const DEFAULT_CHAOS_FAULT_MESSAGE = 'Injected fault (chaos)';

/** The options `chaos` takes (a JSON spec's keys for it too); any other key is a violation. @internal */
export const CHAOS_OPTION_KEYS: readonly string[] = ['enabled', 'fault', 'latency', 'outcome'];
/** @internal */
export const CHAOS_FAULT_KEYS: readonly string[] = ['rate', 'error', 'message'];
/** @internal */
export const CHAOS_LATENCY_KEYS: readonly string[] = ['rate', 'delay'];
/** @internal */
export const CHAOS_OUTCOME_KEYS: readonly string[] = ['rate', 'result', 'value'];

const DATA_FAULT_KEYS: readonly string[] = ['rate', 'message'];
const DATA_OUTCOME_KEYS: readonly string[] = ['rate', 'value'];

/** [0, 1]: a rate of 0 never injects, 1 always does. */
const RATE: NumberRule = Object.freeze({ min: 0, max: 1 });

/** Settings that are off or inject nothing. */
export const NO_CHAOS: ResolvedChaosOptions = Object.freeze({
  enabled: false,
  fault: undefined,
  latency: undefined,
  outcome: undefined,
});

/**
 * The chaos strategy (SPEC §14.3). Innermost in its policy — inside the timeout, so injected latency meets it —
 * and drawn once per attempt with the `Resilience`'s `random`, in this order: **fault**, then **outcome**, then
 * **latency**, stopping at the first that hits. So an attempt gets at most one injection; with several configured,
 * the effective rates are `fault.rate`, `(1 − fault.rate) · outcome.rate` and
 * `(1 − fault.rate)(1 − outcome.rate) · latency.rate`. An injected fault or outcome replaces the call (the function
 * does not run); injected latency delays it. Each injection emits `chaos_injected`.
 */
export class ChaosStrategy {
  readonly type = 'chaos' as const;
  readonly options: ResolvedChaosOptions;

  constructor(options: ChaosOptions = {}) {
    const v = new OptionsValidator('ChaosStrategy');
    this.options = resolveChaosOptions(v, v.options(options, CHAOS_OPTION_KEYS, 'chaos'));
    v.throwIfInvalid();
    Object.freeze(this);
  }
}

/** Resolves (and validates into `v`) a chaos options record; frozen. @internal */
export function resolveChaosOptions(
  v: OptionsValidator,
  o: Readonly<Record<string, unknown>>,
): ResolvedChaosOptions {
  return Object.freeze({
    enabled: v.boolean('enabled', o['enabled'], false),
    fault: o['fault'] === undefined ? undefined : resolveChaosFault(v, 'fault', o['fault']),
    latency: o['latency'] === undefined ? undefined : resolveChaosLatency(v, 'latency', o['latency']),
    outcome: o['outcome'] === undefined ? undefined : resolveChaosOutcome(v, 'outcome', o['outcome']),
  });
}

/** `value` as an object whose keys are all `known`; each unknown key is a violation. */
function injection(
  v: OptionsValidator,
  path: string,
  value: unknown,
  known: readonly string[],
): Readonly<Record<string, unknown>> {
  const o = v.object(path, value);
  for (const key of Object.keys(o))
    if (!known.includes(key))
      v.fail(`${path}.${key}`, `a known ${path} option (${known.join(', ')})`, o[key]);
  return o;
}

/** `code`: whether `error` may be given (not in a JSON patch, where only the data form exists). @internal */
export function resolveChaosFault(
  v: OptionsValidator,
  path: string,
  value: unknown,
  code = true,
): ResolvedChaosFault {
  const o = injection(v, path, value, code ? CHAOS_FAULT_KEYS : DATA_FAULT_KEYS);
  const rate = v.number(`${path}.rate`, o['rate'], RATE);
  const error = code ? o['error'] : undefined;
  const message = o['message'];
  if (error !== undefined) {
    v.check(typeof error === 'function', `${path}.error`, 'a function () => error', error);
    if (message !== undefined)
      v.fail(`${path}.message`, 'absent when error is given (one or the other)', message);
    return Object.freeze({ rate, error: error as () => unknown, message: undefined });
  }
  v.check(message === undefined || typeof message === 'string', `${path}.message`, 'a string', message);
  return Object.freeze({
    rate,
    error: undefined,
    message: typeof message === 'string' ? message : DEFAULT_CHAOS_FAULT_MESSAGE,
  });
}

/** @internal */
export function resolveChaosLatency(v: OptionsValidator, path: string, value: unknown): ResolvedChaosLatency {
  const o = injection(v, path, value, CHAOS_LATENCY_KEYS);
  const rate = v.number(`${path}.rate`, o['rate'], RATE);
  // Durations are finite (time/duration.ts): an attempt is never parked forever.
  return Object.freeze({ rate, delay: v.duration(`${path}.delay`, o['delay'], false) });
}

/** `code`: whether `result` may be given (not in a JSON patch). @internal */
export function resolveChaosOutcome(
  v: OptionsValidator,
  path: string,
  value: unknown,
  code = true,
): ResolvedChaosOutcome {
  const o = injection(v, path, value, code ? CHAOS_OUTCOME_KEYS : DATA_OUTCOME_KEYS);
  const rate = v.number(`${path}.rate`, o['rate'], RATE);
  const result = code ? o['result'] : undefined;
  if (result === undefined) return Object.freeze({ rate, result: undefined, value: o['value'] });
  v.check(typeof result === 'function', `${path}.result`, 'a function () => result', result);
  if (o['value'] !== undefined)
    v.fail(`${path}.value`, 'absent when result is given (one or the other)', o['value']);
  return Object.freeze({ rate, result: result as () => unknown, value: undefined });
}

/** `settings` when they are enabled and inject something, else `undefined` (what an attempt checks). @internal */
export function armedChaos(settings: ResolvedChaosOptions | undefined): ResolvedChaosOptions | undefined {
  if (settings === undefined || !settings.enabled) return undefined;
  const { fault, latency, outcome } = settings;
  return fault === undefined && latency === undefined && outcome === undefined ? undefined : settings;
}
