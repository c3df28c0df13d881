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
  checkQuery,
  reportedViolations,
  jsonBody,
  routeTarget,
  singleQueryValue,
  type RequestHeaders,
} from './admin-request';

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
  // Explicit token: this base class has no class decorator, so TS emits no constructor metadata for it.
  constructor(@Inject(Resilience) private readonly resilience: Resilience) {}

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
  ): Promise<ForceOpenResult> {
    const route = routeTarget(headers, body, query);
    await adminCall(() => this.resilience.admin.forceOpen(policy, ...optional(route)));
    return { policy, route: route ?? null, forcedOpen: true };
  }

  @Delete('policies/:policy/force-open')
  @HttpCode(200)
  async clearForcedOpen(
    @Param('policy') policy: string,
    @Headers() headers: RequestHeaders,
    @Body() body: unknown,
    @Query() query: unknown,
  ): Promise<ForceOpenResult> {
    const route = routeTarget(headers, body, query);
    await adminCall(() => this.resilience.admin.clearForcedOpen(policy, ...optional(route)));
    return { policy, route: route ?? null, forcedOpen: false };
  }

  @Post('policies/:policy/reset')
  @HttpCode(200)
  async reset(
    @Param('policy') policy: string,
    @Headers() headers: RequestHeaders,
    @Body() body: unknown,
    @Query() query: unknown,
  ): Promise<{ policy: string; route: string | null; reset: true }> {
    const route = routeTarget(headers, body, query);
    await adminCall(() => this.resilience.admin.resetBreaker(policy, ...optional(route)));
    return { policy, route: route ?? null, reset: true };
  }

  @Put('policies/:policy')
  @HttpCode(200)
  async retune(
    @Param('policy') policy: string,
    @Headers() headers: RequestHeaders,
    @Body() body: unknown,
    @Query() query: unknown,
  ): Promise<{ policy: string; spec: unknown }> {
    const json = jsonBody(headers, body);
    const check = new RequestCheck();
    checkQuery(check, query, []);
    check.throwIfInvalid();
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
    await adminCall(() => this.resilience.admin.retune({ ...spec, name: policy }), heading);
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

/** Runs an admin operation; a configuration error becomes a 400 (`heading`: how its message begins) or a 404. */
async function adminCall(op: () => Promise<void>, heading = 'Invalid admin request'): Promise<void> {
  try {
    await op();
  } catch (error) {
    if (!isResilienceError(error) || error.kind !== 'configuration') throw error;
    if (error.code === ErrorCode.UNKNOWN_POLICY) throw unknownPolicy(String(error.details?.['policy'] ?? ''));
    throw new BadRequestException({
      statusCode: 400,
      error: 'Bad Request',
      code: error.code,
      ...reportedViolations(heading, asArray(error.details?.['violations']) as Violation[], error.message),
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
