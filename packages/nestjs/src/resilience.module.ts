import { Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { APP_FILTER, ApplicationConfig, DiscoveryModule } from '@nestjs/core';
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
      useFactory: createResilience,
    },
    StreamGate,
    ResilienceExplorer,
    ResilienceHealthIndicator,
    ResilienceInterceptor,
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

  onApplicationShutdown(): void {
    this.resilience.dispose();
  }
}
