import { BadRequestException, UnsupportedMediaTypeException } from '@nestjs/common';
import { formatValue, type Violation } from '@ballast/core';

/** Request headers as both adapters hand them to `@Headers()` (Node's `IncomingHttpHeaders`). */
export type RequestHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** The code of a 400 for an admin request Ballast cannot read (a malformed route, an unknown parameter). */
export const INVALID_REQUEST = 'invalid_request';

/**
 * Collects every violation of one request and throws them together, in the shape and wording of core's
 * `invalid_policy` errors (`<path> must be <constraint>, got <value>` and `violations: [{ path, constraint, value }]`),
 * so every 400 of the admin API reads the same. Paths: `route` (a body field, relative to the body), `?route` (a
 * query parameter), `body` (the body as a whole).
 */
export class RequestCheck {
  readonly violations: Violation[] = [];

  fail(path: string, constraint: string, value: unknown): void {
    this.violations.push({ path, constraint, value });
  }

  throwIfInvalid(heading = 'Invalid admin request', code = INVALID_REQUEST): void {
    if (this.violations.length === 0) return;
    throw new BadRequestException({
      statusCode: 400,
      error: 'Bad Request',
      code,
      ...reportedViolations(heading, this.violations),
    });
  }
}

/**
 * How many violations a 400 lists. A spec of 20,000 bad strategies is 20,000 violations: listed in full, with the
 * message naming each, an 800 KB request drew a 67 MB answer. The rest is counted (`violationCount`).
 */
export const MAX_REPORTED_VIOLATIONS = 50;

/**
 * The `message` and `violations` of a 400 (plus `violationCount` when some are left out): the first
 * {@link MAX_REPORTED_VIOLATIONS}, worded as core words them, each value echoed within bounds ({@link echo}).
 * `fullMessage` is used as is when nothing is left out (core's own wording of its error).
 */
export function reportedViolations(
  heading: string,
  violations: readonly Violation[],
  fullMessage?: string,
): { message: string; violations: unknown[]; violationCount?: number } {
  const shown = violations.slice(0, MAX_REPORTED_VIOLATIONS);
  const parts = shown.map((v) => `${v.path} must be ${v.constraint}, got ${formatValue(v.value)}`);
  const left = violations.length - shown.length;
  if (left === 0)
    return { message: fullMessage ?? `${heading}: ${parts.join('; ')}`, violations: echoedViolations(shown) };
  return {
    message: `${heading}: ${parts.join('; ')}; and ${left} more violation${left === 1 ? '' : 's'}`,
    violations: echoedViolations(shown),
    violationCount: violations.length,
  };
}

/** How deep a given value is echoed in a 400's `violations`; deeper arrays and objects read `[…]` / `{…}`. */
const ECHO_DEPTH = 8;
/** How many array items, object fields and nested values in all one echoed value shows; then `…`. */
const ECHO_ITEMS = 20;
const ECHO_NODES = 200;
/** How many characters of a string value are echoed. */
const ECHO_CHARS = 200;

/**
 * A given value as a 400 echoes it: cut at {@link ECHO_DEPTH} levels, {@link ECHO_ITEMS} items per array or
 * object and {@link ECHO_NODES} values in all (`…` marks what is left out), long strings shortened. A request body
 * nested thousands of levels deep (well within the adapters' size limits) would otherwise overflow the stack while
 * the response is serialised, turning the 400 into a 500; a wide one would be echoed back whole.
 */
function echo(value: unknown, depth: number, budget: { nodes: number }): unknown {
  budget.nodes--;
  if (typeof value === 'string')
    return value.length > ECHO_CHARS ? `${value.slice(0, ECHO_CHARS)}… (${value.length} characters)` : value;
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= ECHO_DEPTH || budget.nodes <= 0) return Array.isArray(value) ? '[…]' : '{…}';
  if (Array.isArray(value)) {
    const items: unknown[] = [];
    for (const item of value as unknown[]) {
      if (items.length === ECHO_ITEMS || budget.nodes <= 0) {
        items.push(`… ${value.length - items.length} more`);
        break;
      }
      items.push(echo(item, depth + 1, budget));
    }
    return items;
  }
  const entries = Object.entries(value);
  const out: [string, unknown][] = [];
  for (const [key, item] of entries) {
    if (out.length === ECHO_ITEMS || budget.nodes <= 0) {
      out.push(['…', `${entries.length - out.length} more fields`]);
      break;
    }
    out.push([key, echo(item, depth + 1, budget)]);
  }
  // fromEntries defines own properties, so a `__proto__` key from a JSON body stays a plain key.
  return Object.fromEntries(out);
}

/** Violations as a 400 body carries them, each value echoed within bounds ({@link echo}). */
export function echoedViolations(violations: readonly unknown[]): unknown[] {
  return violations.map((v) =>
    isRecord(v) && 'value' in v ? { ...v, value: echo(v['value'], 0, { nodes: ECHO_NODES }) } : v,
  );
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A request carries a body when it says so in its framing headers (an empty POST has `content-length: 0`). */
function hasBody(headers: RequestHeaders): boolean {
  if (headers['transfer-encoding'] !== undefined) return true;
  const length = headers['content-length'];
  return length !== undefined && length !== '0';
}

/**
 * The body when the request has one, else `undefined`. A body must be JSON: anything else answers 415, because
 * the adapters disagree about it (Express leaves `text/plain` unparsed, Fastify hands it over as a string, both
 * parse forms) and a body the API ignored would silently turn a one-route operation into a whole-policy one. For
 * the same reason a JSON body the application left unparsed (Express with `bodyParser: false`) is a 400.
 */
export function jsonBody(headers: RequestHeaders, body: unknown): unknown {
  if (!hasBody(headers)) return undefined;
  const raw = headers['content-type'];
  const type = (Array.isArray(raw) ? raw[0] : raw)?.split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json')
    throw new UnsupportedMediaTypeException({
      statusCode: 415,
      error: 'Unsupported Media Type',
      code: 'unsupported_media_type',
      message: `Invalid admin request: the body must be JSON (Content-Type: application/json), got ${formatValue(
        type ?? 'no Content-Type',
      )}`,
    });
  // A JSON body the application never parsed (Express with `bodyParser: false`): read as absent, a one-route
  // force-open would act on every route.
  if (body === undefined)
    throw new BadRequestException({
      statusCode: 400,
      error: 'Bad Request',
      code: INVALID_REQUEST,
      message:
        'Invalid admin request: the request has a JSON body, but the application did not parse it (its body ' +
        'parser is off): enable a JSON body parser, or pass a route as ?route= instead of in the body',
      violations: [],
    });
  return body;
}

/** Unknown query parameters are violations (a typo like `?rout=eu` must not read as "no route"). */
export function checkQuery(
  check: RequestCheck,
  query: unknown,
  known: readonly string[],
): Record<string, unknown> {
  const q = isRecord(query) ? query : {};
  for (const key of Object.keys(q).filter((k) => !known.includes(k)))
    check.fail(
      `?${key}`,
      known.length === 0
        ? 'absent (this endpoint takes no query parameters)'
        : `a known query parameter (${known.map((k) => `?${k}`).join(', ')})`,
      q[key],
    );
  return q;
}

/** One non-empty value of a query parameter: `?policy=` and `?policy=a&policy=b` are violations. */
export function singleQueryValue(check: RequestCheck, name: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string' && value !== '') return value;
  check.fail(`?${name}`, 'a single non-empty value', value);
  return undefined;
}

/**
 * The route a force-open / clear / reset targets: `{ "route": "…" }` in a JSON body and/or `?route=…` (equal when
 * both are given). No route anywhere — no body, `{}`, no query — is the whole policy (SPEC §9). Everything else is
 * a 400 (`{ "route": null }`, a non-string or empty route, unknown fields or parameters, two different routes) or a
 * 415 (a non-JSON body), so an operation meant for one route never reaches every route.
 */
export function routeTarget(headers: RequestHeaders, body: unknown, query: unknown): string | undefined {
  return actionTarget(headers, body, query, []).route;
}

/** The fields an admin action's body may carry besides `route` (SPEC §14.1). */
export type ActionField = 'ttl' | 'reason' | 'scope';

/** What an action's request asks for: its route, and the options core validates (`ttl`, `reason`, `scope`). */
export interface ActionTarget {
  readonly route: string | undefined;
  readonly options: { ttl?: unknown; reason?: unknown; scope?: unknown };
}

/**
 * {@link routeTarget} plus the options an action takes in its body (`ttl` as ms or a duration string, `reason`,
 * `scope: 'fleet' | 'local'`). Their types are checked here; their constraints by core, whose violations the
 * controller reports under the same names.
 */
export function actionTarget(
  headers: RequestHeaders,
  body: unknown,
  query: unknown,
  fields: readonly ActionField[],
): ActionTarget {
  const json = jsonBody(headers, body);
  const check = new RequestCheck();
  const fromQuery = singleQueryValue(check, 'route', checkQuery(check, query, ['route'])['route']);
  let fromBody: string | undefined;
  const options: { ttl?: unknown; reason?: unknown; scope?: unknown } = {};
  const known = ['route', ...fields];
  if (json !== undefined) {
    if (!isRecord(json))
      check.fail('body', `a JSON object { ${known.map((k) => `"${k}"?`).join(', ')} }, or absent`, json);
    else
      for (const [key, value] of Object.entries(json)) {
        if (key === 'route') {
          if (typeof value === 'string' && value !== '') fromBody = value;
          else check.fail('route', 'a non-empty string', value);
        } else if (key === 'ttl' && fields.includes('ttl')) {
          if (typeof value === 'number' || typeof value === 'string') options.ttl = value;
          else check.fail('ttl', "a duration > 0 (ms, or a string like '10m')", value);
        } else if (key === 'reason' && fields.includes('reason')) {
          if (typeof value === 'string') options.reason = value;
          else check.fail('reason', 'a string', value);
        } else if (key === 'scope' && fields.includes('scope')) {
          options.scope = value;
        } else check.fail(key, `a known field (${known.join(', ')})`, value);
      }
  }
  if (fromBody !== undefined && fromQuery !== undefined && fromBody !== fromQuery)
    check.fail('route', `the same as ?route (${formatValue(fromQuery)}), or absent`, fromBody);
  check.throwIfInvalid();
  return { route: fromBody ?? fromQuery, options };
}

/**
 * The body of a setting (`PUT …/mode`, `PUT …/chaos`): the setting's own fields (`valueKeys`), and `reason` and
 * `scope` as the other actions take them. Every unknown field, and a query string, is a 400 naming it.
 */
export function settingBody(
  headers: RequestHeaders,
  body: unknown,
  query: unknown,
  valueKeys: readonly string[],
): { value: Record<string, unknown>; options: { reason?: unknown; scope?: unknown } } {
  const json = jsonBody(headers, body);
  const check = new RequestCheck();
  checkQuery(check, query, []);
  const value: Record<string, unknown> = {};
  const options: { reason?: unknown; scope?: unknown } = {};
  const known = [...valueKeys, 'reason', 'scope'];
  if (!isRecord(json))
    check.fail('body', `a JSON object { ${known.map((k) => `"${k}"?`).join(', ')} }`, json);
  else
    for (const [key, v] of Object.entries(json)) {
      if (valueKeys.includes(key)) value[key] = v;
      else if (key === 'reason') {
        if (typeof v === 'string') options.reason = v;
        else check.fail('reason', 'a string', v);
      } else if (key === 'scope') options.scope = v;
      else check.fail(key, `a known field (${known.join(', ')})`, v);
    }
  check.throwIfInvalid();
  return { value, options };
}

/**
 * The version an `If-Match` header names (`3`, or the entity tag `"3"` the API's responses carry as `ETag`).
 * Absent: undefined. Anything else (`*`, a list, a weak tag) is a 400: a compare-and-set the server cannot read
 * must not turn into an unconditional write.
 */
export function ifMatchVersion(headers: RequestHeaders): number | undefined {
  const raw = headers['if-match'];
  if (raw === undefined) return undefined;
  const value = (Array.isArray(raw) ? raw.join(',') : raw).trim();
  const m = /^(?:"(\d{1,15})"|(\d{1,15}))$/.exec(value);
  if (m !== null) return Number(m[1] ?? m[2]);
  const check = new RequestCheck();
  check.fail('If-Match', 'a policy version (e.g. 3 or "3")', raw);
  check.throwIfInvalid();
  return undefined;
}
