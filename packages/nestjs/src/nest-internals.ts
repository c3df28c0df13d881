/**
 * Everything Ballast reads from NestJS that is not its public API, in one place: metadata keys and enums from deep
 * imports, the injector's InstanceWrapper type, and the metadata keys of optional packages (@nestjs/microservices,
 * @nestjs/websockets, @nestjs/graphql), spelled out so none of them is a dependency. NestJS 11 and 12 agree on all of
 * it; nest-internals.spec.ts checks every spelled-out key against the package's own constant on each major of the
 * test matrix, so a Nest release that moves one fails there, not in an app.
 */
export {
  CUSTOM_ROUTE_ARGS_METADATA,
  EXCEPTION_FILTERS_METADATA,
  FILTER_CATCH_EXCEPTIONS,
  INTERCEPTORS_METADATA,
  METHOD_METADATA,
  PATH_METADATA,
  ROUTE_ARGS_METADATA,
  SSE_METADATA,
} from '@nestjs/common/constants';
export { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
export type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper';

/** `PATTERN_HANDLER_METADATA` of `@nestjs/microservices/constants`. */
export const PATTERN_HANDLER_METADATA = 'microservices:handler_type';
/** `MESSAGE_MAPPING_METADATA` of `@nestjs/websockets/constants`. */
export const MESSAGE_MAPPING_METADATA = 'websockets:message_mapping';
/** `GATEWAY_METADATA` of `@nestjs/websockets/constants`. */
export const GATEWAY_METADATA = 'websockets:is_gateway';
/** The metadata `@nestjs/graphql` puts on resolver methods (its `graphql.constants`). */
export const RESOLVER_TYPE_METADATA = 'graphql:resolver_type';
export const RESOLVER_PROPERTY_METADATA = 'graphql:resolve_property';
export const RESOLVER_REFERENCE_METADATA = 'graphql:resolve_reference';

/**
 * A `@nestjs/microservices` `ClientGrpcProxy` (what `ClientsModule.register` with `Transport.GRPC` provides), as far as
 * Ballast touches it: its `options` (a protected field; `channelOptions` reach grpc-js's `Client` constructor as they
 * are, read when the proxy creates a service's client — lazily, on the first `getService(name)`) and `clients`, the
 * grpc-js clients it has created by service name.
 */
export interface GrpcClientProxyInternals {
  options: { readonly channelOptions?: Readonly<Record<string, unknown>> | undefined } & Readonly<
    Record<string, unknown>
  >;
  readonly clients: ReadonlyMap<string, unknown>;
}

/** The instance as a `ClientGrpcProxy`, recognised by its shape (its service lookups and client cache), or undefined. */
export function grpcClientProxyOf(instance: unknown): GrpcClientProxyInternals | undefined {
  const proxy = instance as Partial<Record<string, unknown>> | null | undefined;
  if (typeof proxy !== 'object' || proxy === null) return undefined;
  return typeof proxy['getService'] === 'function' &&
    typeof proxy['getClientByServiceName'] === 'function' &&
    typeof proxy['createClientByServiceName'] === 'function' &&
    proxy['clients'] instanceof Map &&
    typeof proxy['options'] === 'object' &&
    proxy['options'] !== null
    ? (proxy as unknown as GrpcClientProxyInternals)
    : undefined;
}
