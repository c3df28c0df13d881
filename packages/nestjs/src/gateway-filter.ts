import { EXCEPTION_FILTERS_METADATA, GATEWAY_METADATA } from './nest-internals';
import { HttpAdapterHost, type ModulesContainer } from '@nestjs/core';
import { ResilienceExceptionFilter } from './resilience-exception.filter';

/** One instance for every gateway: on WebSockets the filter needs no HTTP adapter and no application config. */
let gatewayFilter: ResilienceExceptionFilter | undefined;

/**
 * Nest applies no global filter to WebSocket gateways (`@nestjs/websockets`' filter context has no global
 * metadata), so ResilienceModule's `APP_FILTER` never saw a rejection raised in a gateway handler, or in a decorated
 * provider it called: the client got Nest's "Internal server error". Each gateway class gets the filter as its first
 * class-level filter instead. Nest consults a handler's filters in reverse, so this one comes last: the gateway's
 * own method and class filters that catch these errors still win, as they do over the global filter on HTTP.
 *
 * Runs in the explorer's constructor: Nest reads a gateway's filters when it connects the gateway (at `init()`,
 * before any `onModuleInit`). The metadata is the class's, so a second application finds it there and adds nothing.
 */
export function attachGatewayFilter(modules: ModulesContainer): void {
  for (const moduleRef of modules.values())
    for (const wrapper of moduleRef.providers.values()) {
      const metatype: unknown = wrapper.metatype;
      if (typeof metatype !== 'function' || Reflect.getMetadata(GATEWAY_METADATA, metatype) !== true)
        continue;
      const filters = (Reflect.getMetadata(EXCEPTION_FILTERS_METADATA, metatype) ?? []) as unknown[];
      if (filters.some((f) => f instanceof ResilienceExceptionFilter || f === ResilienceExceptionFilter))
        continue;
      gatewayFilter ??= new ResilienceExceptionFilter(new HttpAdapterHost());
      Reflect.defineMetadata(EXCEPTION_FILTERS_METADATA, [gatewayFilter, ...filters], metatype);
    }
}
