import { ErrorCode, ResilienceError } from '../errors/resilience-error';
import type { Duration } from '../strategies/types';
import { OptionsValidator, Rules } from '../validation/options-validator';

/** Where an admin action applies (SPEC §14.1): every replica sharing the control store (default), or this one. */
export type AdminScope = 'fleet' | 'local';

/** Options every admin action takes. `reason` and `actor` go to the audit trail. */
export interface AdminActionOptions {
  readonly scope?: AdminScope;
  readonly reason?: string;
  /** Who acted (a user id, never a credential). */
  readonly actor?: string;
}

export interface ForceOpenOptions extends AdminActionOptions {
  /** The override clears itself after this long (fleet-wide with a shared control store). */
  readonly ttl?: Duration;
}

export interface RetuneOptions extends AdminActionOptions {
  /** Compare-and-set: refused with `version_conflict` unless the policy is at this version. */
  readonly ifVersion?: number;
}

export interface ResolvedAdminOptions {
  readonly scope: AdminScope;
  readonly reason: string | undefined;
  readonly actor: string | undefined;
  readonly ttl: number | undefined;
  readonly ifVersion: number | undefined;
}

/** Longest `reason` kept (an audit trail is not a log sink). */
export const MAX_REASON_LENGTH = 500;
/** Longest `actor` kept. */
export const MAX_ACTOR_LENGTH = 200;

const BASE_KEYS = ['scope', 'reason', 'actor'] as const;

/**
 * Admin calls are driven by HTTP bodies, scripts and consoles: a route that is not a string (a number from a JSON
 * body, an object) would otherwise become a key of its own, and the operator's action would silently miss the
 * route they meant; a `ttl` of `'10 min'` would silently mean "forever". One `configuration` error names each bad
 * argument, with its constraint and the value given.
 */
export function checkAdminCall(
  method: string,
  policy: unknown,
  route: unknown,
  options: unknown,
  extra: readonly ('ttl' | 'ifVersion')[] = [],
  /** Checks of the method's own arguments, reported with the rest. */
  more?: (v: OptionsValidator) => void,
): ResolvedAdminOptions {
  const v = new OptionsValidator(`admin.${method}()`, { heading: `Invalid admin.${method}() call` });
  if (typeof policy !== 'string') v.fail('policy', 'a policy name', policy);
  if (route !== undefined && typeof route !== 'string') v.fail('route', 'a string or undefined', route);
  let o: Readonly<Record<string, unknown>> = {};
  if (options !== undefined) {
    if (typeof options !== 'object' || options === null || Array.isArray(options))
      v.fail('options', `an object { ${[...BASE_KEYS, ...extra].join(', ')} } or undefined`, options);
    else {
      o = options as Record<string, unknown>;
      for (const key of Object.keys(o))
        if (!(BASE_KEYS as readonly string[]).includes(key) && !(extra as readonly string[]).includes(key))
          v.fail(`options.${key}`, `a known option (${[...BASE_KEYS, ...extra].join(', ')})`, o[key]);
    }
  }
  const scope = v.oneOf('options.scope', o['scope'], ['fleet', 'local'], 'fleet');
  const reason = text(v, 'options.reason', o['reason'], MAX_REASON_LENGTH);
  const actor = text(v, 'options.actor', o['actor'], MAX_ACTOR_LENGTH);
  const ttl = extra.includes('ttl') ? v.optionalDuration('options.ttl', o['ttl'], true) : undefined;
  // `Infinity` parses as a duration; "forever" is a force-open without a ttl. (NaN: already reported.)
  if (ttl === Infinity) v.fail('options.ttl', 'a finite duration > 0', o['ttl']);
  const ifVersion = extra.includes('ifVersion')
    ? v.optionalNumber('options.ifVersion', o['ifVersion'], Rules.COUNT)
    : undefined;
  more?.(v);
  v.throwIfInvalid();
  return { scope, reason, actor, ttl, ifVersion };
}

function text(v: OptionsValidator, path: string, value: unknown, max: number): string | undefined {
  if (value === undefined) return undefined;
  v.check(
    typeof value === 'string' && value.length <= max,
    path,
    `a string of at most ${max} characters`,
    value,
  );
  return typeof value === 'string' ? value : undefined;
}

/** `admin.audit({ limit })`: 1 to 1000, default 100. */
export function checkAuditLimit(options: unknown): number {
  const v = new OptionsValidator('admin.audit()', { heading: 'Invalid admin.audit() call' });
  if (options !== undefined && (typeof options !== 'object' || options === null))
    v.fail('options', 'an object { limit } or undefined', options);
  const o = (typeof options === 'object' && options !== null ? options : {}) as Record<string, unknown>;
  for (const key of Object.keys(o))
    if (key !== 'limit') v.fail(`options.${key}`, 'a known option (limit)', o[key]);
  const limit = v.optionalNumber('options.limit', o['limit'], { integer: true, min: 1, max: 1000 }, 100);
  v.throwIfInvalid();
  return limit;
}

export function unknownPolicyError(name: unknown): ResilienceError {
  return new ResilienceError({
    kind: 'configuration',
    code: ErrorCode.UNKNOWN_POLICY,
    message: `Unknown policy '${String(name)}'`,
    details: { policy: name },
  });
}
