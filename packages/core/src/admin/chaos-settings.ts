import type { PolicyRuntime } from '../executor/policy-runtime';
import {
  NO_CHAOS,
  armedChaos,
  resolveChaosFault,
  resolveChaosLatency,
  resolveChaosOutcome,
  type ChaosSettingsView,
  type ResolvedChaosOptions,
} from '../strategies/chaos-strategy';
import { OptionsValidator, formatValue } from '../validation/options-validator';
import type { ChaosPatch } from './chaos-patch';

/**
 * Run-time chaos (SPEC §14.3, `admin.setChaos`): the settings in force live in the policy's runtime
 * (`PolicyRuntime.chaos`), initialised from its `ChaosStrategy`, and change here without rebuilding the policy.
 *
 * - A patch changes only what it names: `enabled` switches injection on or off and keeps the injections; an
 *   injection object replaces that injection; `null` removes it.
 * - Any policy may be given chaos at run time, with or without a `ChaosStrategy` (it then starts from nothing,
 *   disabled): an operator can run an experiment on a policy nobody prepared for one.
 * - Injections from a patch are data (JSON): a fault throws `new Error(message)` — a plain `Error`, which `classify`
 *   calls `internal` (SPEC §5 names no chaos code) — and an outcome returns `value`.
 * - An operator's settings outlive a retune of the policy (as a policy-wide force-open does); {@link resetChaosHere}
 *   goes back to the policy's own.
 */

export type { ChaosPatch } from './chaos-patch';

const PATCH_KEYS = ['enabled', 'fault', 'latency', 'outcome'] as const;

/** Validates a patch into `v`; returns the settings it makes from `current`. */
function applyPatch(
  v: OptionsValidator,
  current: ResolvedChaosOptions,
  patch: unknown,
): ResolvedChaosOptions {
  const o = v.object('', patch);
  for (const key of Object.keys(o))
    if (!(PATCH_KEYS as readonly string[]).includes(key))
      v.fail(key, `a known chaos setting (${PATCH_KEYS.join(', ')})`, o[key]);
  const enabled = v.boolean('enabled', o['enabled'], current.enabled);
  // The data forms only (a patch is JSON): `error` / `result` are unknown keys here.
  const fault = injection(o, 'fault', current.fault, (x) => resolveChaosFault(v, 'fault', x, false));
  const latency = injection(o, 'latency', current.latency, (x) => resolveChaosLatency(v, 'latency', x));
  const outcome = injection(o, 'outcome', current.outcome, (x) =>
    resolveChaosOutcome(v, 'outcome', x, false),
  );
  return Object.freeze({ enabled, fault, latency, outcome });
}

/** `undefined`: keep the current one; `null`: remove it; anything else: resolve it. */
function injection<T>(
  o: Readonly<Record<string, unknown>>,
  key: string,
  current: T | undefined,
  resolve: (value: unknown) => T,
): T | undefined {
  const value = o[key];
  if (value === undefined) return current;
  if (value === null) return undefined;
  return resolve(value);
}

/**
 * Every problem of a patch, one message each, naming the field, its constraint and the value given
 * (`fault.rate must be in [0, 1], got 1.5`); empty when the patch is valid.
 */
export function chaosPatchViolations(patch: unknown): string[] {
  const v = new OptionsValidator('chaos patch');
  applyPatch(v, NO_CHAOS, patch);
  return v.violations.map((x) => `${x.path} must be ${x.constraint}, got ${formatValue(x.value)}`);
}

/** Validates a patch into `v` (an admin call's validator: its violations are reported with the call's others). */
export function checkChaosPatch(v: OptionsValidator, patch: unknown): void {
  applyPatch(v, NO_CHAOS, patch);
}

/**
 * A fleet `setChaos` stands as one cumulative patch over the policy's own settings (SPEC §14.1: replicas match a
 * state, never replay commands): the new patch over the one standing, key by key (`null` kept: it removes).
 */
export function mergeChaosPatches(standing: unknown, patch: ChaosPatch): ChaosPatch {
  const base = typeof standing === 'object' && standing !== null ? (standing as ChaosPatch) : {};
  return { ...base, ...patch };
}

/**
 * Applies `patch` to the policy's chaos settings, at once for the calls' next attempts. Throws one `configuration`
 * / `invalid_policy` error naming every violation, and changes nothing, when the patch is invalid.
 */
export function setChaosHere(runtime: PolicyRuntime, patch: ChaosPatch): void {
  const v = new OptionsValidator('chaos patch', {
    heading: `Invalid chaos settings for policy '${runtime.policy.name}'`,
    policy: runtime.policy.name,
  });
  const next = applyPatch(v, runtime.chaos ?? NO_CHAOS, patch);
  v.throwIfInvalid();
  install(runtime, next);
  runtime.chaosOverride = true;
}

/** Drops an operator's settings: back to the policy's own `ChaosStrategy` (or none). */
export function resetChaosHere(runtime: PolicyRuntime): void {
  install(runtime, runtime.policy.chaos?.options);
  runtime.chaosOverride = false;
}

/** A retune's new runtime keeps the operator's settings of the one it replaces (call before it serves calls). */
export function carryChaosOverride(from: PolicyRuntime, to: PolicyRuntime): void {
  if (!from.chaosOverride) return;
  install(to, from.chaos);
  to.chaosOverride = true;
}

function install(runtime: PolicyRuntime, settings: ResolvedChaosOptions | undefined): void {
  runtime.chaos = settings;
  runtime.chaosArmed = armedChaos(settings);
}

/** The chaos settings in force, as JSON; `undefined` when the policy has none (no strategy, never set). */
export function chaosSettingsOf(runtime: PolicyRuntime): ChaosSettingsView | undefined {
  const c = runtime.chaos;
  if (c === undefined) return undefined;
  const view: { -readonly [K in keyof ChaosSettingsView]: ChaosSettingsView[K] } = { enabled: c.enabled };
  const { fault, latency, outcome } = c;
  if (fault !== undefined)
    view.fault =
      fault.error === undefined
        ? { rate: fault.rate, message: fault.message! }
        : { rate: fault.rate, custom: true };
  if (latency !== undefined) view.latency = { rate: latency.rate, delay: latency.delay };
  if (outcome !== undefined)
    view.outcome =
      outcome.result !== undefined
        ? { rate: outcome.rate, custom: true }
        : outcome.value === undefined
          ? { rate: outcome.rate }
          : { rate: outcome.rate, value: outcome.value };
  return view;
}
