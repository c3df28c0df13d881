import { UseInterceptors, applyDecorators } from '@nestjs/common';
import { ResilienceError } from '@ballast/core';
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
function bind(
  decorator: '@Resilient' | '@Hedged',
  binding: ResilienceBinding,
): MethodDecorator & ClassDecorator {
  const apply = applyDecorators(ResilienceBindingMetadata(binding), UseInterceptors(ResilienceInterceptor));
  return (target: object, key?: string | symbol, descriptor?: PropertyDescriptor): void => {
    if (key !== undefined) {
      const misuse = notAMethod(target, descriptor);
      if (misuse !== undefined) throw misplaced(`${decorator}('${binding.policy}')`, target, key, misuse);
    }
    apply(target, key, descriptor);
  };
}

/**
 * What the decorated member is when it is not an instance method, else undefined. Nest's own metadata decorators
 * fail on a getter or setter with a bare `TypeError` (there is no `descriptor.value` to attach to), and on a
 * property or a static method they succeed and nothing ever reads them: neither the interceptor (handlers are
 * instance methods) nor the explorer (it scans prototypes) would see the decorator.
 */
function notAMethod(target: object, descriptor: PropertyDescriptor | undefined): string | undefined {
  if (descriptor === undefined) return 'a property';
  if (descriptor.get !== undefined) return 'a getter';
  if (descriptor.set !== undefined) return 'a setter';
  if (typeof descriptor.value !== 'function') return 'not a method';
  if (typeof target === 'function') return 'a static method';
  return undefined;
}

function misplaced(decorator: string, target: object, key: string | symbol, what: string): ResilienceError {
  const owner = typeof target === 'function' ? target : target.constructor;
  const name = `${owner?.name ?? 'anonymous class'}.${String(key)}`;
  return new ResilienceError({
    kind: 'configuration',
    message:
      `${decorator} on ${name}, ${what}: only methods can be decorated — a controller handler, a method of an ` +
      `injectable provider — or a controller class. Decorate the method that does the work.`,
  });
}

/**
 * Runs a controller handler (on a method or a whole controller class; the method's decorator wins) or a provider
 * method inside `resilience.run` under `policy`. The policy's hedge is skipped: use {@link Hedged} for reads.
 *
 * @publicApi
 */
export function Resilient(policy: string, options: ResilientOptions = {}): MethodDecorator & ClassDecorator {
  return bind('@Resilient', { policy, route: options.route, hedge: false });
}

/**
 * Like {@link Resilient} but lets the policy's hedge fire: a slow attempt gets raced by another one. Use it only
 * for idempotent work (GETs, reads), since the handler may run more than once concurrently.
 *
 * @publicApi
 */
export function Hedged(policy: string, options: ResilientOptions = {}): MethodDecorator & ClassDecorator {
  return bind('@Hedged', { policy, route: options.route, hedge: true });
}

export { CallSignal } from './call-signal';
