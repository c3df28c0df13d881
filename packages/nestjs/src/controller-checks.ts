import type { InstanceWrapper } from './nest-internals';
import { MetadataScanner, Reflector } from '@nestjs/core';
import { CriticalityMetadata } from './criticality-level';
import { isWrappedHttpHandler } from './http-handler-wrapping';
import { isHandler } from './method-kinds';
import { ResilienceBindingMetadata, type ResilienceBinding } from './resilience-binding';

const reflector = new Reflector();
const scanner = new MetadataScanner();

function bindingOf(proto: object, name: string): ResilienceBinding | undefined {
  const method: unknown = (proto as Record<string, unknown>)[name];
  return typeof method === 'function' ? reflector.get(ResilienceBindingMetadata, method) : undefined;
}

function criticalityOf(proto: object, name: string): unknown {
  const method: unknown = (proto as Record<string, unknown>)[name];
  return typeof method === 'function' ? reflector.get(CriticalityMetadata, method) : undefined;
}

/**
 * Bootstrap checks of the controllers' decorators: each binding's policy goes to `check`, and a decorator on a
 * controller method that is not a route or message handler — which nothing would ever apply — is a problem.
 * Returns one wrapped HTTP handler's name, if any (the caller checks the adapter can run it).
 */
export function checkControllers(
  controllers: readonly InstanceWrapper[],
  check: (binding: ResilienceBinding | undefined, where: string) => void,
  problems: string[],
): string | undefined {
  let wrappedHandler: string | undefined;
  for (const wrapper of controllers) {
    const proto = prototypeOf(wrapper);
    if (proto === undefined) continue;
    check(reflector.get(ResilienceBindingMetadata, proto.constructor), wrapper.name);
    for (const name of scanner.getAllMethodNames(proto)) {
      if (isWrappedHttpHandler((proto as Record<string, unknown>)[name]))
        wrappedHandler ??= `${wrapper.name}.${name}`;
      const binding = bindingOf(proto, name);
      if (binding === undefined) {
        if (
          criticalityOf(proto, name) !== undefined &&
          !isHandler((proto as Record<string, unknown>)[name] as object)
        )
          problems.push(
            `${wrapper.name}.${name}: @Criticality on a controller method that is not a route or message handler ` +
              'does nothing; decorate the handler that calls it, or move the method to a provider',
          );
        continue;
      }
      check(binding, `${wrapper.name}.${name}`);
      // Only route and message handlers are wrapped or intercepted: on any other controller method the decorator
      // would silently do nothing.
      if (!isHandler((proto as Record<string, unknown>)[name] as object))
        problems.push(
          `${wrapper.name}.${name}: @Resilient/@Hedged on a controller method that is not a route or message ` +
            'handler does nothing (only handlers run under a policy); ' +
            'move the method to a provider (an @Injectable() class the controller injects) and decorate it ' +
            'there, or decorate the handler that calls it',
        );
    }
  }
  return wrappedHandler;
}

/** The prototype holding a wrapper's methods: its instance's, else its class's (not for factory providers). */
export function prototypeOf(wrapper: InstanceWrapper): object | undefined {
  const instance: unknown = wrapper.instance;
  if (typeof instance === 'object' && instance !== null) return Object.getPrototypeOf(instance) as object;
  const metatype = wrapper.metatype as { prototype?: unknown } | null | undefined;
  const proto = metatype?.prototype;
  return !wrapper.inject && typeof proto === 'object' && proto !== null ? proto : undefined;
}
