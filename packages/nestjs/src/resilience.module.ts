import { Module, type OnApplicationShutdown } from '@nestjs/common';
import { APP_FILTER, APP_INTERCEPTOR, DiscoveryModule } from '@nestjs/core';
import { Resilience, ResiliencePolicy, policyFromSpec, type ResilienceOptions } from '@ballast/core';
import { ResilienceExceptionFilter } from './resilience-exception.filter';
import { ResilienceExplorer } from './resilience.explorer';
import { ResilienceHealthIndicator } from './resilience.health';
import { ResilienceInterceptor } from './resilience.interceptor';
import { ConfigurableResilienceModule, RESILIENCE_MODULE_OPTIONS } from './resilience.module-definition';
import type { PolicyDefinition, ResilienceModuleOptions } from './resilience-module-options.interface';
import { StreamGate } from './stream-gate';

function toPolicy(definition: PolicyDefinition): ResiliencePolicy {
  return definition instanceof ResiliencePolicy ? definition : policyFromSpec(definition);
}

/** Builds the application's one `Resilience` from the module options. @internal */
export function createResilience(options: ResilienceModuleOptions): Resilience {
  const config: { -readonly [K in keyof ResilienceOptions]: ResilienceOptions[K] } = {
    policies: (options.policies ?? []).map(toPolicy),
  };
  if (options.stores !== undefined) config.stores = options.stores;
  if (options.clock !== undefined) config.clock = options.clock;
  if (options.random !== undefined) config.random = options.random;
  if (options.classify !== undefined) config.classify = options.classify;
  if (options.maxKeysPerPolicy !== undefined) config.maxKeysPerPolicy = options.maxKeysPerPolicy;
  if (options.ambientContext !== undefined) config.ambientContext = options.ambientContext;
  return new Resilience(config);
}

/**
 * Ballast for Nest: `ResilienceModule.forRoot({ policies })` (or `forRootAsync`) in the root module is all a user
 * writes. It provides the `Resilience` (inject it by class), registers the interceptor and exception filter
 * globally (APP_INTERCEPTOR / APP_FILTER — no `useGlobal*` calls that tests would forget), wraps decorated
 * provider methods at bootstrap, and drops listeners on shutdown. Stores are injected, so this package never
 * depends on `@ballast/redis`.
 *
 * @publicApi
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    {
      provide: Resilience,
      inject: [RESILIENCE_MODULE_OPTIONS],
      useFactory: createResilience,
    },
    StreamGate,
    ResilienceExplorer,
    ResilienceHealthIndicator,
    { provide: APP_INTERCEPTOR, useClass: ResilienceInterceptor },
    { provide: APP_FILTER, useClass: ResilienceExceptionFilter },
  ],
  exports: [Resilience, ResilienceHealthIndicator],
})
export class ResilienceModule extends ConfigurableResilienceModule implements OnApplicationShutdown {
  constructor(private readonly resilience: Resilience) {
    super();
  }

  onApplicationShutdown(): void {
    this.resilience.dispose();
  }
}
