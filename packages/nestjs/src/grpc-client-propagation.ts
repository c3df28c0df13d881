import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { grpcPropagationInterceptor, type GrpcPropagationInterceptor } from '@ballast/core';
import { grpcClientProxyOf, type GrpcClientProxyInternals } from './nest-internals';
import { RESILIENCE_MODULE_OPTIONS } from './resilience.module-definition';
import type { ResilienceModuleOptions } from './resilience-module-options.interface';

/**
 * `headers.propagate: true`, for gRPC: every `@nestjs/microservices` gRPC client of the application (a
 * `ClientGrpcProxy` provider, as `ClientsModule.register` makes) sends the deadline and criticality on, through core's
 * `grpcPropagationInterceptor` added to its `channelOptions.interceptors` (after the application's own, so those
 * see the call first, and a deadline or criticality the caller set wins). The deadline goes as gRPC's own
 * `grpc-timeout`, the criticality as metadata under `headers.criticality` (default `x-criticality`); the call is
 * cancelled when the budget runs out or the ambient call aborts. The proxies are found by shape (nest-internals.ts),
 * so `@nestjs/microservices` stays an optional package.
 *
 * The proxy creates a service's grpc-js client on its first `getService()` and reads the options then: clients
 * created before this provider's `onModuleInit` (a `getService()` in a constructor, or in the init hook of a global
 * module) do not propagate, and a warning names the proxy's services. The proxy's options object is replaced, not
 * changed (the application's own object may be shared); shutdown puts it back and turns the interceptor off. @internal
 */
@Injectable()
export class GrpcClientPropagation implements OnModuleInit, OnApplicationShutdown {
  readonly #uninstall: (() => void)[] = [];

  constructor(
    private readonly discovery: DiscoveryService,
    @Inject(RESILIENCE_MODULE_OPTIONS) private readonly options: ResilienceModuleOptions,
  ) {}

  onModuleInit(): void {
    const headers = this.options.headers;
    if (headers?.propagate !== true) return;
    const interceptor = grpcPropagationInterceptor({ criticality: headers.criticality });
    const seen = new Set<unknown>();
    for (const wrapper of this.discovery.getProviders()) {
      const proxy = grpcClientProxyOf(wrapper.isDependencyTreeStatic() ? wrapper.instance : undefined);
      if (proxy === undefined || seen.has(proxy)) continue;
      seen.add(proxy);
      if (proxy.clients.size > 0)
        new Logger('ResilienceModule').warn(
          `headers.propagate: the gRPC client ${String(wrapper.name)} created its clients for ${[...proxy.clients.keys()].join(', ')} before the application's init; their calls do not send the deadline and criticality on (call getService() in onModuleInit, not in a constructor)`,
        );
      this.#uninstall.push(install(proxy, interceptor));
    }
  }

  onApplicationShutdown(): void {
    for (const uninstall of this.#uninstall.splice(0)) uninstall();
  }
}

/**
 * Adds `interceptor` last to the proxy's channel options (to `interceptor_providers` when the application uses
 * those: grpc-js refuses both lists at once). Returns the undo.
 */
function install(proxy: GrpcClientProxyInternals, interceptor: GrpcPropagationInterceptor): () => void {
  let active = true;
  // Clients created while installed keep it: uninstalling turns it into a pass-through.
  const ours: GrpcPropagationInterceptor = (options, nextCall) =>
    active ? interceptor(options, nextCall) : nextCall(options);
  const original = proxy.options;
  const channel = original.channelOptions ?? {};
  const providers = channel['interceptor_providers'];
  const channelOptions = Array.isArray(providers)
    ? { ...channel, interceptor_providers: [...(providers as unknown[]), () => ours] }
    : { ...channel, interceptors: [...((channel['interceptors'] as unknown[] | undefined) ?? []), ours] };
  const replaced = { ...original, channelOptions };
  proxy.options = replaced;
  return () => {
    active = false;
    if (proxy.options === replaced) proxy.options = original;
  };
}
