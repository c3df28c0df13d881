import { ResilienceError, formatValue } from '@ballast/core';
import {
  ResilienceBindingMetadata,
  type ResilienceBinding,
  type ResilientCall,
  type ResilientOptions,
  type ResilientRequest,
  type RouteFunction,
} from './resilience-binding';
import { attachInterceptor } from './interceptor-entry';

export { ResilienceBindingMetadata };
export type { ResilienceBinding, ResilientCall, ResilientOptions, ResilientRequest, RouteFunction };

/**
 * The binding's metadata plus Ballast's interceptor (interceptor-entry.ts): the interceptor is attached to the
 * decorated handlers (or controller) only, so the other routes of the application never run through Nest's
 * interceptor machinery — on Node 20 that step alone costs more than the policy (see the package README).
 * On a provider method the interceptor metadata is inert; the module wraps the method instead.
 */
function bind(
  decorator: '@Resilient' | '@Hedged',
  binding: ResilienceBinding,
): MethodDecorator & ClassDecorator {
  const metadata = ResilienceBindingMetadata(binding);
  return (target: object, key?: string | symbol, descriptor?: PropertyDescriptor): void => {
    if (key !== undefined) {
      const misuse = notAMethod(target, descriptor);
      if (misuse !== undefined) throw misplaced(`${decorator}('${binding.policy}')`, target, key, misuse);
    }
    (metadata as (target: object, key?: string | symbol, descriptor?: PropertyDescriptor) => void)(
      target,
      key,
      descriptor,
    );
    attachInterceptor(target, key, descriptor);
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

/**
 * The decorator's own arguments, checked when the class is defined: a policy name that is not a string, or a
 * numeric route from a constants file, would otherwise fail every request at run time (or, for the route, become a
 * breaker key of its own). A route function's answers can only be checked per call (call-route.ts).
 */
function checkArguments(decorator: string, policy: unknown, options: unknown): void {
  const problems: string[] = [];
  if (typeof policy !== 'string' || policy.trim() === '')
    problems.push(`the policy must be a policy name, got ${formatValue(policy)}`);
  if (typeof options !== 'object' || options === null)
    problems.push(`the options must be an object ({ route? }), got ${formatValue(options)}`);
  else {
    const route = (options as { route?: unknown }).route;
    if (route !== undefined && typeof route !== 'string' && typeof route !== 'function')
      problems.push(
        `options.route must be a string, a function of the call or undefined, got ${formatValue(route)}`,
      );
  }
  if (problems.length > 0)
    throw new ResilienceError({
      kind: 'configuration',
      message: `Invalid ${decorator}(): ${problems.join('; ')}`,
      details: { problems },
    });
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
  checkArguments('@Resilient', policy, options);
  return bind('@Resilient', { policy, route: options.route, hedge: false });
}

/**
 * Like {@link Resilient} but lets the policy's hedge fire: a slow attempt gets raced by another one. Use it only
 * for idempotent work (GETs, reads), since the handler may run more than once concurrently.
 *
 * @publicApi
 */
export function Hedged(policy: string, options: ResilientOptions = {}): MethodDecorator & ClassDecorator {
  checkArguments('@Hedged', policy, options);
  return bind('@Hedged', { policy, route: options.route, hedge: true });
}

export { CallSignal } from './call-signal';
