import { UseInterceptors, applyDecorators, createParamDecorator } from '@nestjs/common';
import { currentSignal } from '@ballast/core';
import {
  ResilienceBindingMetadata,
  type ResilienceBinding,
  type ResilientOptions,
} from './resilience-binding';
import { ResilienceInterceptor } from './resilience.interceptor';

export { ResilienceBindingMetadata };
export type { ResilienceBinding, ResilientOptions };

/**
 * The binding's metadata plus `UseInterceptors(ResilienceInterceptor)`: the interceptor is attached to the
 * decorated handlers (or controller) only, so the other routes of the application never run through Nest's
 * interceptor machinery — on Node 20 that step alone costs more than the policy (see the package README).
 * On a provider method the interceptor metadata is inert; the module wraps the method instead.
 */
function bind(binding: ResilienceBinding): MethodDecorator & ClassDecorator {
  return applyDecorators(ResilienceBindingMetadata(binding), UseInterceptors(ResilienceInterceptor));
}

/**
 * Runs a controller handler (on a method or a whole controller class; the method's decorator wins) or a provider
 * method inside `resilience.run` under `policy`. The policy's hedge is skipped: use {@link Hedged} for reads.
 *
 * @publicApi
 */
export function Resilient(policy: string, options: ResilientOptions = {}): MethodDecorator & ClassDecorator {
  return bind({ policy, route: options.route, hedge: false });
}

/**
 * Like {@link Resilient} but lets the policy's hedge fire: a slow attempt gets raced by another one. Use it only
 * for idempotent work (GETs, reads), since the handler may run more than once concurrently.
 *
 * @publicApi
 */
export function Hedged(policy: string, options: ResilientOptions = {}): MethodDecorator & ClassDecorator {
  return bind({ policy, route: options.route, hedge: true });
}

/**
 * The signal of the running call (aborted on attempt timeout, deadline, a lost hedge race or client disconnect),
 * injected as a handler parameter. Same as calling `currentSignal()` from `@ballast/core` in the handler; undefined
 * outside a `@Resilient` handler.
 *
 * @publicApi
 */
export const CallSignal = createParamDecorator((_data: unknown): AbortSignal | undefined => currentSignal());
