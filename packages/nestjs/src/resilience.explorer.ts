import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper';
import { ErrorCode, Resilience, ResilienceError, type RunOptions } from '@ballast/core';
import { Observable, isObservable } from 'rxjs';
import { runObservable } from './observable-call';
import { ResilienceBindingMetadata, type ResilienceBinding } from './resilience-binding';
import { StreamGate } from './stream-gate';

type AnyMethod = (this: unknown, ...args: unknown[]) => unknown;

/** Marks wrappers, so a prototype shared by two applications (request-scoped providers) is wrapped only once. */
const WRAPPED = Symbol('ballast:wrapped');
/** Per prototype-wrapped method, the `Resilience` of the application that bootstrapped last. */
const prototypeBindings = new WeakMap<AnyMethod, { resilience: Resilience; streams: StreamGate }>();

/**
 * Finds `@Resilient` / `@Hedged` methods on every provider at bootstrap (DiscoveryService + MetadataScanner) and
 * wraps them, so `this.inventory.get(id)` runs under the policy without the caller knowing. Controllers are left
 * alone: their handlers go through `ResilienceInterceptor`, which also sees the HTTP request.
 *
 * It also fails the bootstrap when a decorator names a policy that does not exist, or decorates a provider class
 * (only provider *methods* can be wrapped) — mistakes that would otherwise surface as 500s in production.
 */
@Injectable()
export class ResilienceExplorer implements OnModuleInit {
  private readonly logger = new Logger('Ballast');

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    private readonly resilience: Resilience,
    private readonly streams: StreamGate,
  ) {}

  async onModuleInit(): Promise<void> {
    const known = new Set(await this.resilience.admin.policies());
    const problems: string[] = [];
    const check = (binding: ResilienceBinding | undefined, where: string): void => {
      if (binding !== undefined && !known.has(binding.policy))
        problems.push(`${where} uses unknown policy '${binding.policy}'`);
    };
    for (const wrapper of this.discovery.getControllers()) {
      const proto = prototypeOf(wrapper);
      if (proto === undefined) continue;
      check(this.reflector.get(ResilienceBindingMetadata, proto.constructor), wrapper.name);
      for (const name of this.scanner.getAllMethodNames(proto))
        check(this.#bindingOf(proto, name), `${wrapper.name}.${name}`);
    }
    let wrapped = 0;
    for (const wrapper of this.discovery.getProviders()) {
      const proto = prototypeOf(wrapper);
      if (proto === undefined || proto === Object.prototype) continue;
      if (this.reflector.get(ResilienceBindingMetadata, proto.constructor) !== undefined) {
        problems.push(
          `${String(wrapper.name)}: @Resilient/@Hedged on a provider class is not supported; decorate its methods`,
        );
      }
      for (const name of this.scanner.getAllMethodNames(proto)) {
        const binding = this.#bindingOf(proto, name);
        if (binding === undefined) continue;
        check(binding, `${String(wrapper.name)}.${name}`);
        if (known.has(binding.policy)) {
          this.#wrap(wrapper, proto, name, binding);
          wrapped++;
        }
      }
    }
    if (problems.length > 0) {
      throw new ResilienceError({
        kind: 'configuration',
        code: ErrorCode.UNKNOWN_POLICY,
        message: `Ballast cannot start: ${problems.join('; ')}`,
        details: { problems },
      });
    }
    if (wrapped > 0) this.logger.log(`Wrapped ${wrapped} provider method(s) with resilience policies`);
  }

  #bindingOf(proto: object, name: string): ResilienceBinding | undefined {
    const method: unknown = (proto as Record<string, unknown>)[name];
    return typeof method === 'function' ? this.reflector.get(ResilienceBindingMetadata, method) : undefined;
  }

  /**
   * Static providers get an own-property wrapper on their instance (the prototype stays untouched, so several
   * applications in one process — e.g. tests — each keep their own `Resilience`). Request-scoped and transient
   * providers have no instance yet, so their prototype method is wrapped, bound to the latest application.
   */
  #wrap(wrapper: InstanceWrapper, proto: object, name: string, binding: ResilienceBinding): void {
    const original = (proto as Record<string, AnyMethod>)[name]!;
    if (wrapper.isDependencyTreeStatic() && !wrapper.isTransient && isObject(wrapper.instance)) {
      const host = { resilience: this.resilience, streams: this.streams };
      const wrappedMethod = this.#wrapper(original, binding, () => host, returnsObservable(proto, name));
      Object.defineProperty(wrapper.instance, name, {
        value: wrappedMethod,
        writable: true,
        configurable: true,
      });
      return;
    }
    const target = original as AnyMethod & { [WRAPPED]?: AnyMethod };
    const unwrapped = target[WRAPPED] ?? original;
    if (target[WRAPPED] === undefined) {
      const wrappedMethod = this.#wrapper(
        unwrapped,
        binding,
        () => prototypeBindings.get(unwrapped)!,
        returnsObservable(proto, name),
      );
      Object.defineProperty(wrappedMethod, WRAPPED, { value: unwrapped });
      copyMetadata(unwrapped, wrappedMethod);
      Object.defineProperty(proto, name, { value: wrappedMethod, writable: true, configurable: true });
    }
    prototypeBindings.set(unwrapped, { resilience: this.resilience, streams: this.streams });
  }

  /** Builds the replacement: async generators are breaker-gated, Observables stay lazy, the rest run as calls. */
  #wrapper(
    original: AnyMethod,
    binding: ResilienceBinding,
    host: () => { resilience: Resilience; streams: StreamGate },
    observable: boolean,
  ): AnyMethod {
    const options: RunOptions<unknown> = {
      policy: binding.policy,
      route: binding.route,
      hedge: binding.hedge,
    };
    if (isAsyncGeneratorFunction(original)) {
      return function (this: unknown, ...args: unknown[]) {
        return host().streams.gateIterable(
          binding,
          () => original.apply(this, args) as AsyncIterable<unknown>,
        );
      };
    }
    if (observable) {
      return function (this: unknown, ...args: unknown[]) {
        return new Observable<unknown>((subscriber) => {
          runObservable(
            host().resilience,
            () => original.apply(this, args) as Observable<unknown>,
            options,
            true,
            subscriber,
          );
        });
      };
    }
    return function (this: unknown, ...args: unknown[]) {
      return host().resilience.run(() => {
        const result = original.apply(this, args);
        if (isObservable(result)) throw observableWithoutMetadata(original.name);
        return result;
      }, options);
    };
  }
}

function prototypeOf(wrapper: InstanceWrapper): object | undefined {
  const instance: unknown = wrapper.instance;
  if (isObject(instance)) return Object.getPrototypeOf(instance) as object;
  const metatype = wrapper.metatype as { prototype?: unknown } | null | undefined;
  return !wrapper.inject && isObject(metatype?.prototype) ? metatype.prototype : undefined;
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}

function isAsyncGeneratorFunction(fn: AnyMethod): boolean {
  return Object.prototype.toString.call(fn) === '[object AsyncGeneratorFunction]';
}

/** `design:returntype` is emitted for decorated methods: `Observable` when the method is typed to return one. */
function returnsObservable(proto: object, name: string): boolean {
  return Reflect.getMetadata('design:returntype', proto, name) === Observable;
}

/**
 * Without `design:returntype` (a type-only import of Observable, or a compiler that emits no decorator metadata)
 * an Observable method would be wrapped as a Promise-returning one, silently changing what callers get.
 */
function observableWithoutMetadata(method: string): ResilienceError {
  return new ResilienceError({
    kind: 'configuration',
    message:
      `@Resilient method ${method}() returned an Observable, but its declared return type was not seen at bootstrap. ` +
      "Declare it as ': Observable<T>' with a value import (import { Observable } from 'rxjs'), with " +
      'emitDecoratorMetadata on, so the method is wrapped as a lazy Observable.',
  });
}

function copyMetadata(from: object, to: object): void {
  for (const key of Reflect.getMetadataKeys(from) as unknown[])
    Reflect.defineMetadata(key, Reflect.getMetadata(key, from), to);
}
