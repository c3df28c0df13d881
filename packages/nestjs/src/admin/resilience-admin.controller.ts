import {
  BadRequestException,
  Body,
  Delete,
  Get,
  Headers,
  HttpCode,
  Inject,
  NotFoundException,
  Param,
  Post,
  Put,
  Query,
  Req,
  ConflictException,
  ServiceUnavailableException,
} from '@nestjs/common';
import {
  ErrorCode,
  Resilience,
  formatValue,
  isResilienceError,
  policyToSpec,
  type ResilienceStateSnapshot,
  type Violation,
} from '@ballast/core';
import {
  RequestCheck,
  actionTarget,
  checkQuery,
  ifMatchVersion,
  reportedViolations,
  jsonBody,
  settingBody,
  singleQueryValue,
  type RequestHeaders,
} from './admin-request';
import { defaultActor, type ActorOf } from './admin-actor';

/** A snapshot with `route: null` instead of a missing key, so "policy-wide" is visible in the JSON. */
export type AdminStateEntry = Omit<ResilienceStateSnapshot, 'route'> & { readonly route: string | null };

/**
 * The control plane over HTTP (SPEC §9). Not decorated with `@Controller` here: `ResilienceAdminModule.forRoot`
 * derives a subclass with the configured path and guard, so one class serves any prefix.
 * Errors are answered by the controller itself — 404 for unknown policies, 400 (with the path of each violation)
 * for invalid specs and unreadable requests, 415 for non-JSON bodies — because the global filter deliberately
 * leaves configuration errors alone. Which route an operation targets: see {@link routeTarget}.
 */
export class ResilienceAdminController {
  /** Who an action is audited as; `forRoot`'s subclass sets the configured `actor` option. */
  static actorOf: ActorOf = defaultActor;

  // Explicit token: this base class has no class decorator, so TS emits no constructor metadata for it.
  constructor(@Inject(Resilience) private readonly resilience: Resilience) {}

  #actor(request: unknown): { actor?: string } {
    const actor = (this.constructor as typeof ResilienceAdminController).actorOf(request);
    return actor === undefined ? {} : { actor };
  }

  @Get('state')
  async state(@Query() query: unknown): Promise<{ policies: string[]; state: AdminStateEntry[] }> {
    const check = new RequestCheck();
    const policy = singleQueryValue(check, 'policy', checkQuery(check, query, ['policy'])['policy']);
    check.throwIfInvalid();
    const policies = await this.resilience.admin.policies();
    if (policy !== undefined && !policies.includes(policy)) throw unknownPolicy(policy);
    const snapshots = await this.resilience.admin.inspect(policy === undefined ? {} : { policy });
    return { policies, state: snapshots.map((s) => ({ ...s, route: s.route ?? null })) };
  }

  @Post('policies/:policy/force-open')
  @HttpCode(200)
  async forceOpen(
    @Param('policy') policy: string,
    @Headers() headers: RequestHeaders,
    @Body() body: unknown,
    @Query() query: unknown,
    @Req() request: unknown,
  ): Promise<ForceOpenResult> {
    const { route, options } = actionTarget(headers, body, query, ['ttl', 'reason', 'scope']);
    await adminCall(() =>
      this.resilience.admin.forceOpen(policy, route, {
        ...defined(options),
        ...this.#actor(request),
      } as never),
    );
    return { policy, route: route ?? null, forcedOpen: true, scope: scopeOf(options) };
  }

  @Delete('policies/:policy/force-open')
  @HttpCode(200)
  async clearForcedOpen(
    @Param('policy') policy: string,
    @Headers() headers: RequestHeaders,
    @Body() body: unknown,
    @Query() query: unknown,
    @Req() request: unknown,
  ): Promise<ForceOpenResult> {
    const { route, options } = actionTarget(headers, body, query, ['reason', 'scope']);
    await adminCall(() =>
      this.resilience.admin.clearForcedOpen(policy, route, {
        ...defined(options),
        ...this.#actor(request),
      } as never),
    );
    return { policy, route: route ?? null, forcedOpen: false, scope: scopeOf(options) };
  }

  @Post('policies/:policy/reset')
  @HttpCode(200)
  async reset(
    @Param('policy') policy: string,
    @Headers() headers: RequestHeaders,
    @Body() body: unknown,
    @Query() query: unknown,
    @Req() request: unknown,
  ): Promise<{ policy: string; route: string | null; reset: true; scope: string }> {
    const { route, options } = actionTarget(headers, body, query, ['reason', 'scope']);
    await adminCall(() =>
      this.resilience.admin.resetBreaker(policy, route, {
        ...defined(options),
        ...this.#actor(request),
      } as never),
    );
    return { policy, route: route ?? null, reset: true, scope: scopeOf(options) };
  }

  /** Enforce or shadow (SPEC §14.3): body `{ "mode": "shadow", "reason"?, "scope"? }`. */
  @Put('policies/:policy/mode')
  @HttpCode(200)
  async setMode(
    @Param('policy') policy: string,
    @Headers() headers: RequestHeaders,
    @Body() body: unknown,
    @Query() query: unknown,
    @Req() request: unknown,
  ): Promise<{ policy: string; mode: unknown; scope: string }> {
    const { value, options } = settingBody(headers, body, query, ['mode']);
    await adminCall(() =>
      this.resilience.admin.setMode(
        policy,
        value['mode'] as never,
        {
          ...defined(options),
          ...this.#actor(request),
        } as never,
      ),
    );
    return { policy, mode: value['mode'], scope: scopeOf(options) };
  }

  /**
   * Chaos at run time (SPEC §14.3): body `{ "enabled"?, "fault"?, "latency"?, "outcome"?, "reason"?, "scope"? }`,
   * a patch (`null` removes an injection). Answers the patch applied.
   */
  @Put('policies/:policy/chaos')
  @HttpCode(200)
  async setChaos(
    @Param('policy') policy: string,
    @Headers() headers: RequestHeaders,
    @Body() body: unknown,
    @Query() query: unknown,
    @Req() request: unknown,
  ): Promise<{ policy: string; chaos: unknown; scope: string }> {
    const { value, options } = settingBody(headers, body, query, ['enabled', 'fault', 'latency', 'outcome']);
    await adminCall(() =>
      this.resilience.admin.setChaos(policy, value, {
        ...defined(options),
        ...this.#actor(request),
      } as never),
    );
    return { policy, chaos: value, scope: scopeOf(options) };
  }

  /** The replicas sharing the control store (SPEC §14.1), this one alone without a shared store. */
  @Get('replicas')
  async replicas(@Query() query: unknown): Promise<{ replicas: unknown[] }> {
    const check = new RequestCheck();
    checkQuery(check, query, []);
    check.throwIfInvalid();
    return { replicas: await this.resilience.admin.replicas() };
  }

  /** The audit trail, newest first; `?limit=` 1–1000 (default 100). */
  @Get('audit')
  async audit(@Query() query: unknown): Promise<{ entries: unknown[] }> {
    const check = new RequestCheck();
    const raw = singleQueryValue(check, 'limit', checkQuery(check, query, ['limit'])['limit']);
    let limit: number | undefined;
    if (raw !== undefined) {
      if (/^\d{1,4}$/.test(raw) && Number(raw) >= 1 && Number(raw) <= 1000) limit = Number(raw);
      else check.fail('?limit', 'an integer from 1 to 1000', raw);
    }
    check.throwIfInvalid();
    return { entries: await this.resilience.admin.audit(limit === undefined ? {} : { limit }) };
  }

  @Put('policies/:policy')
  @HttpCode(200)
  async retune(
    @Param('policy') policy: string,
    @Headers() headers: RequestHeaders,
    @Body() body: unknown,
    @Query() query: unknown,
    @Req() request: unknown,
  ): Promise<{ policy: string; version: number; spec: unknown }> {
    const json = jsonBody(headers, body);
    const check = new RequestCheck();
    checkQuery(check, query, []);
    check.throwIfInvalid();
    const ifVersion = ifMatchVersion(headers);
    // Same heading and code as core's spec violations: to the caller, a name mismatch is one more of them.
    const heading = `Invalid policy spec '${policy}'`;
    if (typeof json !== 'object' || json === null || Array.isArray(json)) {
      check.fail('body', 'a JSON policy spec { "strategies": [...] }', json);
      check.throwIfInvalid(heading, ErrorCode.INVALID_POLICY);
    }
    const spec = json as Record<string, unknown>;
    if (spec['name'] !== undefined && spec['name'] !== policy) {
      check.fail('name', `${formatValue(policy)} (the policy in the URL), or absent`, spec['name']);
      check.throwIfInvalid(heading, ErrorCode.INVALID_POLICY);
    }
    let version = 0;
    await adminCall(async () => {
      ({ version } = await this.resilience.admin.retune(
        { ...spec, name: policy },
        { ...(ifVersion === undefined ? {} : { ifVersion }), ...this.#actor(request) },
      ));
    }, heading);
    const current = this.resilience.policy(policy);
    return { policy, version, spec: current === undefined ? undefined : policyToSpec(current) };
  }
}

interface ForceOpenResult {
  readonly policy: string;
  readonly route: string | null;
  readonly forcedOpen: boolean;
  /** `fleet`: every replica sharing the control store; `local`: this replica. */
  readonly scope: string;
}

const scopeOf = (options: { scope?: unknown }): string =>
  typeof options.scope === 'string' ? options.scope : 'fleet';

/** The options a body set (an absent field stays absent, not `undefined`). */
const defined = (o: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

/** Runs an admin operation; a configuration error becomes a 400 (`heading`: how its message begins) or a 404. */
async function adminCall(op: () => Promise<void>, heading = 'Invalid admin request'): Promise<void> {
  try {
    await op();
  } catch (error) {
    if (!isResilienceError(error)) throw error;
    if (error.code === ErrorCode.VERSION_CONFLICT)
      throw new ConflictException({
        statusCode: 409,
        error: 'Conflict',
        code: error.code,
        message: error.message,
        version: error.details?.['version'],
      });
    if (error.code === ErrorCode.STORE_UNAVAILABLE)
      throw new ServiceUnavailableException({
        statusCode: 503,
        error: 'Service Unavailable',
        code: error.code,
        message:
          'The control store is unavailable: nothing was changed (a { "scope": "local" } action still works)',
      });
    if (error.kind !== 'configuration') throw error;
    if (error.code === ErrorCode.UNKNOWN_POLICY) throw unknownPolicy(String(error.details?.['policy'] ?? ''));
    const violations = asArray(error.details?.['violations']) as Violation[];
    // Core names an admin call's options `options.ttl`; over HTTP they are the body's fields.
    const renamed = violations.map((v) => ({ ...v, path: v.path.replace(/^options\./, '') }));
    const changed = renamed.some((v, i) => v.path !== violations[i]!.path);
    throw new BadRequestException({
      statusCode: 400,
      error: 'Bad Request',
      code: error.code,
      ...reportedViolations(heading, renamed, changed ? undefined : error.message),
    });
  }
}

const asArray = (value: unknown): readonly unknown[] => (Array.isArray(value) ? value : []);

function unknownPolicy(policy: string): NotFoundException {
  return new NotFoundException({
    statusCode: 404,
    error: 'Not Found',
    code: ErrorCode.UNKNOWN_POLICY,
    message: `Unknown policy '${policy}'`,
  });
}
