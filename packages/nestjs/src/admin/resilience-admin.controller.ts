import {
  BadRequestException,
  Body,
  Delete,
  Get,
  HttpCode,
  Inject,
  NotFoundException,
  Param,
  Post,
  Put,
  Query,
} from '@nestjs/common';
import {
  ErrorCode,
  Resilience,
  isResilienceError,
  policyToSpec,
  type ResilienceStateSnapshot,
} from '@ballast/core';

/** A snapshot with `route: null` instead of a missing key, so "policy-wide" is visible in the JSON. */
export type AdminStateEntry = Omit<ResilienceStateSnapshot, 'route'> & { readonly route: string | null };

/**
 * The control plane over HTTP (SPEC §9). Not decorated with `@Controller` here: `ResilienceAdminModule.forRoot`
 * derives a subclass with the configured path and guard, so one class serves any prefix.
 * Errors are answered by the controller itself — 404 for unknown policies, 400 (with the JSON path of each
 * violation) for invalid specs — because the global filter deliberately leaves configuration errors alone.
 */
export class ResilienceAdminController {
  // Explicit token: this base class has no class decorator, so TS emits no constructor metadata for it.
  constructor(@Inject(Resilience) private readonly resilience: Resilience) {}

  @Get('state')
  async state(@Query('policy') policy?: string): Promise<{ policies: string[]; state: AdminStateEntry[] }> {
    const policies = await this.resilience.admin.policies();
    if (policy !== undefined && !policies.includes(policy)) throw unknownPolicy(policy);
    const snapshots = await this.resilience.admin.inspect(policy === undefined ? {} : { policy });
    return { policies, state: snapshots.map((s) => ({ ...s, route: s.route ?? null })) };
  }

  @Post('policies/:policy/force-open')
  @HttpCode(200)
  async forceOpen(@Param('policy') policy: string, @Body() body: unknown): Promise<ForceOpenResult> {
    const route = routeOf(body, undefined);
    await adminCall(() => this.resilience.admin.forceOpen(policy, ...optional(route)));
    return { policy, route: route ?? null, forcedOpen: true };
  }

  @Delete('policies/:policy/force-open')
  @HttpCode(200)
  async clearForcedOpen(
    @Param('policy') policy: string,
    @Body() body: unknown,
    @Query('route') queryRoute?: string,
  ): Promise<ForceOpenResult> {
    const route = routeOf(body, queryRoute);
    await adminCall(() => this.resilience.admin.clearForcedOpen(policy, ...optional(route)));
    return { policy, route: route ?? null, forcedOpen: false };
  }

  @Post('policies/:policy/reset')
  @HttpCode(200)
  async reset(
    @Param('policy') policy: string,
    @Body() body: unknown,
  ): Promise<{ policy: string; route: string | null; reset: true }> {
    const route = routeOf(body, undefined);
    await adminCall(() => this.resilience.admin.resetBreaker(policy, ...optional(route)));
    return { policy, route: route ?? null, reset: true };
  }

  @Put('policies/:policy')
  @HttpCode(200)
  async retune(
    @Param('policy') policy: string,
    @Body() body: unknown,
  ): Promise<{ policy: string; spec: unknown }> {
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw badRequest(
        'The body must be a JSON policy spec: { "strategies": [...] }',
        ErrorCode.INVALID_POLICY,
      );
    const spec = body as Record<string, unknown>;
    if (spec['name'] !== undefined && spec['name'] !== policy)
      throw badRequest(
        `$.name: must equal the policy in the URL ('${policy}'), got ${JSON.stringify(spec['name'])}`,
        ErrorCode.INVALID_POLICY,
      );
    await adminCall(() => this.resilience.admin.retune({ ...spec, name: policy }));
    const current = this.resilience.policy(policy);
    return { policy, spec: current === undefined ? undefined : policyToSpec(current) };
  }
}

interface ForceOpenResult {
  readonly policy: string;
  readonly route: string | null;
  readonly forcedOpen: boolean;
}

const optional = (route: string | undefined): [] | [string] => (route === undefined ? [] : [route]);

/** `route` from a JSON body (`{ "route": "…" }`), else from the query; anything but a string is a 400. */
function routeOf(body: unknown, queryRoute: string | undefined): string | undefined {
  const fromBody =
    typeof body === 'object' && body !== null ? (body as { route?: unknown }).route : undefined;
  const route = fromBody ?? queryRoute;
  if (route !== undefined && typeof route !== 'string')
    throw badRequest(`$.route: must be a string, got ${JSON.stringify(route)}`, 'invalid_request');
  return route;
}

async function adminCall(op: () => Promise<void>): Promise<void> {
  try {
    await op();
  } catch (error) {
    if (!isResilienceError(error) || error.kind !== 'configuration') throw error;
    if (error.code === ErrorCode.UNKNOWN_POLICY) throw unknownPolicy(String(error.details?.['policy'] ?? ''));
    throw new BadRequestException({
      statusCode: 400,
      error: 'Bad Request',
      code: error.code,
      message: error.message,
      violations: error.details?.['violations'] ?? [],
    });
  }
}

function unknownPolicy(policy: string): NotFoundException {
  return new NotFoundException({
    statusCode: 404,
    error: 'Not Found',
    code: ErrorCode.UNKNOWN_POLICY,
    message: `Unknown policy '${policy}'`,
  });
}

function badRequest(message: string, code: string): BadRequestException {
  return new BadRequestException({ statusCode: 400, error: 'Bad Request', code, message });
}
