import { UseInterceptors } from '@nestjs/common';
import { INTERCEPTORS_METADATA } from './nest-internals';
import { ResilienceControllerInterceptor, ResilienceInterceptor } from './resilience.interceptor';

/**
 * Lists Ballast's interceptor on a decorated class or method, once: `@Resilient` and `@Criticality` on one
 * member (or a subclass whose parent carries them) would otherwise list the same entry twice, and an entry called
 * again while its own call runs counts as a user's fan-out (a call of its own; see handler-claims.ts).
 * A class gets {@link ResilienceControllerInterceptor}, a method {@link ResilienceInterceptor}: two entries of one
 * handler's chain that tell each other apart.
 */
export function attachInterceptor(
  target: object,
  key?: string | symbol,
  descriptor?: PropertyDescriptor,
): void {
  if (key === undefined) {
    if (listed(target).includes(ResilienceControllerInterceptor)) return;
    UseInterceptors(ResilienceControllerInterceptor)(target as new (...args: never[]) => unknown);
    return;
  }
  if (descriptor === undefined || listed(descriptor.value as object).includes(ResilienceInterceptor)) return;
  UseInterceptors(ResilienceInterceptor)(target, key, descriptor);
}

/** The interceptors Nest will read for the class or method (a class's include its parents'). */
function listed(holder: object): unknown[] {
  return (Reflect.getMetadata(INTERCEPTORS_METADATA, holder) as unknown[] | undefined) ?? [];
}
