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
