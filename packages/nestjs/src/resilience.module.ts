import { Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { APP_FILTER, ApplicationConfig, DiscoveryModule } from '@nestjs/core';
import {
  ErrorCode,
  Resilience,
  ResilienceError,
  ResiliencePolicy,
  formatValue,
  parseDuration,
  isResilienceError,
  policyFromSpec,
  type ResilienceOptions,
} from '@ballast/core';
import { ResilienceExceptionFilter } from './resilience-exception.filter';
import { ResilienceExplorer } from './resilience.explorer';
import { ResilienceHealthIndicator } from './resilience.health';
import { ResilienceInterceptor } from './resilience.interceptor';
import { HttpServicePropagation } from './http-service-propagation';
import { GrpcClientPropagation } from './grpc-client-propagation';
import { ConfigurableResilienceModule, RESILIENCE_MODULE_OPTIONS } from './resilience.module-definition';
import type { PolicyDefinition, ResilienceModuleOptions } from './resilience-module-options.interface';
import { StreamGate } from './stream-gate';

function toPolicy(definition: PolicyDefinition): ResiliencePolicy {
  return definition instanceof ResiliencePolicy ? definition : policyFromSpec(definition);
}

/** RFC 9110 `token`: what a header field name may contain. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function headerViolations(headers: unknown): string[] {
  if (headers === undefined) return [];
  if (typeof headers !== 'object' || headers === null)
    return [`headers must be an object { deadline?, criticality? }, got ${formatValue(headers)}`];
  const out: string[] = [];
  for (const field of ['deadline', 'criticality'] as const) {
    const name = (headers as Record<string, unknown>)[field];
    if (name !== undefined && (typeof name !== 'string' || !HEADER_NAME.test(name)))
      out.push(`headers.${field} must be a header name (e.g. 'x-${field}'), got ${formatValue(name)}`);
  }
  const max = (headers as Record<string, unknown>)['maxInboundBudget'];
  if (max !== undefined) {
    let ms: number | undefined;
    try {
      ms = parseDuration(max as never);
    } catch {
      ms = undefined;
    }
    if (ms === undefined || !(ms > 0))
      out.push(`headers.maxInboundBudget must be a duration > 0 (e.g. '30s'), got ${formatValue(max)}`);
  }
  const propagate = (headers as Record<string, unknown>)['propagate'];
  if (propagate !== undefined && typeof propagate !== 'boolean')
    out.push(`headers.propagate must be a boolean, got ${formatValue(propagate)}`);
  for (const key of Object.keys(headers))
    if (!['deadline', 'criticality', 'maxInboundBudget', 'propagate'].includes(key))
      out.push(
        `headers.${key} must be a known headers option (deadline, criticality, maxInboundBudget, propagate), got ${formatValue((headers as Record<string, unknown>)[key])}`,
      );
  return out;
}

/** The violations of a configuration error (its own list when it has one), else undefined. */
function violationsOf(error: unknown): string[] | undefined {
  if (!isResilienceError(error) || error.kind !== 'configuration') return undefined;
  const listed = (error.details as { violations?: unknown } | undefined)?.violations;
  if (!Array.isArray(listed)) return [error.message];
  // Core's options checks list { path, constraint, value }; older lists are strings.
  return listed.map((v: unknown) =>
    typeof v === 'string'
      ? v
      : `${(v as { path: string }).path} must be ${(v as { constraint: string }).constraint}, got ${formatValue((v as { value: unknown }).value)}`,
  );
}

/**
 * Builds the application's one `Resilience` from the module options. Every problem — each invalid policy spec, a bad
 * `headers` option, core's own option checks — is reported in one `configuration` error at bootstrap. @internal
 */
export function createResilience(options: ResilienceModuleOptions): Resilience {
  const violations: string[] = [];
  const policies: ResiliencePolicy[] = [];
  const definitions: unknown = options.policies ?? [];
  if (!Array.isArray(definitions)) {
    violations.push(`policies must be an array of policies or JSON specs, got ${formatValue(definitions)}`);
  } else {
    (definitions as PolicyDefinition[]).forEach((definition, i) => {
      try {
        policies.push(toPolicy(definition));
      } catch (error) {
        if (violationsOf(error) === undefined) throw error;
        violations.push(`policies[${i}]: ${(error as Error).message}`);
      }
    });
  }
  violations.push(...headerViolations(options.headers));
  const config: { -readonly [K in keyof ResilienceOptions]: ResilienceOptions[K] } = { policies };
  if (options.stores !== undefined) config.stores = options.stores;
  if (options.clock !== undefined) config.clock = options.clock;
  if (options.random !== undefined) config.random = options.random;
  if (options.classify !== undefined) config.classify = options.classify;
  if (options.maxKeysPerPolicy !== undefined) config.maxKeysPerPolicy = options.maxKeysPerPolicy;
  if (options.ambientContext !== undefined) config.ambientContext = options.ambientContext;
  if (options.replicaId !== undefined) config.replicaId = options.replicaId;
  let resilience: Resilience | undefined;
  try {
    resilience = new Resilience(config);
  } catch (error) {
    const found = violationsOf(error);
    if (found === undefined) throw error;
    violations.push(...found);
  }
  if (resilience === undefined || violations.length > 0) {
    throw new ResilienceError({
      kind: 'configuration',
      code: ErrorCode.INVALID_POLICY,
      message: `Invalid ResilienceModule options: ${violations.join('; ')}`,
      details: { violations },
    });
  }
  return resilience;
}

/**
 * Ballast for Nest: `ResilienceModule.forRoot({ policies })` (or `forRootAsync`) in the root module is all a user
 * writes. It provides the `Resilience` (inject it by class), registers the exception filter globally (APP_FILTER
 * — no `useGlobal*` calls that tests would forget), wraps decorated provider methods at bootstrap, and drops
 * listeners on shutdown. The interceptor comes with the decorators (`UseInterceptors` on the handlers they mark),
 * so an undecorated route costs nothing; only the `headers` option, which applies to every route, registers it
 * globally too. Stores are injected, so this package never depends on `@ballast/redis`.
 *
 * @publicApi
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    {
      provide: Resilience,
      inject: [RESILIENCE_MODULE_OPTIONS],
      // The control store's standing overrides are applied before the application starts serving.
      useFactory: async (options: ResilienceModuleOptions) => {
        const resilience = createResilience(options);
        await resilience.ready();
        return resilience;
      },
    },
    StreamGate,
    ResilienceExplorer,
    ResilienceHealthIndicator,
    ResilienceInterceptor,
    HttpServicePropagation,
    GrpcClientPropagation,
    { provide: APP_FILTER, useClass: ResilienceExceptionFilter },
  ],
  // StreamGate and the options are what the decorators' interceptor needs in whichever module it is instantiated.
  exports: [Resilience, ResilienceHealthIndicator, StreamGate, RESILIENCE_MODULE_OPTIONS],
})
export class ResilienceModule extends ConfigurableResilienceModule implements OnApplicationShutdown {
  constructor(
    private readonly resilience: Resilience,
    @Inject(RESILIENCE_MODULE_OPTIONS) options: ResilienceModuleOptions,
    config: ApplicationConfig,
    interceptor: ResilienceInterceptor,
  ) {
    super();
    // Request headers bind a deadline / criticality for everything a handler calls, decorated or not, so that
    // option needs the interceptor on every route. The constructor runs before Nest registers the routes.
    if (options.headers?.deadline !== undefined || options.headers?.criticality !== undefined)
      config.addGlobalInterceptor(interceptor);
  }

  /** Leaves the fleet (heartbeats, reconcile, subscription) and drops listeners. */
  async onApplicationShutdown(): Promise<void> {
    await this.resilience.close();
    this.resilience.dispose();
  }
}
