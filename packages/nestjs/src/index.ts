// @ballast/nestjs — curated public API.

// Module and options
export { ResilienceModule } from './resilience.module';
export { RESILIENCE_MODULE_OPTIONS } from './resilience.module-definition';
export type {
  ResilienceModuleOptions,
  ResilienceHeadersOptions,
  PolicyDefinition,
} from './resilience-module-options.interface';

// Decorators
export { Resilient, Hedged, CallSignal, ResilienceBindingMetadata } from './resilient.decorator';
export type {
  ResilientOptions,
  ResilienceBinding,
  ResilientCall,
  ResilientRequest,
  RouteFunction,
} from './resilient.decorator';
export { Criticality, CriticalityMetadata, parseCriticality } from './criticality.decorator';
export type { CriticalityLevel, CriticalityName } from './criticality.decorator';

// Interceptor, error mapping
export { ResilienceControllerInterceptor, ResilienceInterceptor } from './resilience.interceptor';
export { ResilienceExceptionFilter } from './resilience-exception.filter';
export { mapResilienceError, retryAfterSeconds } from './http-error-mapping';
export type { MappedResilienceError, ResilienceErrorBody } from './http-error-mapping';
export { ClientClosedRequestError } from './client-disconnect';

// Admin API and health
export { ResilienceAdminModule } from './admin/resilience-admin.module';
export type { ResilienceAdminOptions } from './admin/resilience-admin-options.interface';
export type { AdminStateEntry } from './admin/resilience-admin.controller';
export { ResilienceHealthIndicator } from './resilience.health';
export type { BreakerHealth, ResilienceHealthResult, ResilienceHealthOptions } from './resilience.health';
