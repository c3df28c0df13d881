import { Injectable, Logger, Optional, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import {
  DiscoveryService,
  HttpAdapterHost,
  MetadataScanner,
  ModulesContainer,
  Reflector,
} from '@nestjs/core';
import type { InstanceWrapper } from './nest-internals';
import { ErrorCode, Resilience, ResilienceError, bindCriticality, currentSignal } from '@ballast/core';
import { Observable, isObservable } from 'rxjs';
import { ObservableCall } from './observable-call';
import {
  PROVIDER_WRAPPED as WRAPPED,
  ResilienceBindingMetadata,
  type ResilienceBinding,
  runOptionsOf,
} from './resilience-binding';
import type { DecoratedMethod } from './call-route';
import { ResilientExecution, methodCallRoute, type AnyMethod } from './resilient-execution';
import { StreamGate } from './stream-gate';
import { attachGatewayFilter } from './gateway-filter';
import {
  declaredNonPromise,
  isAsyncGeneratorFunction,
  isMessageHandler,
  isResolverMethod,
  isSubscriptionMethod,
  observableWithoutMetadata,
  proxiedClassPrototype,
  returnsObservable,
} from './method-kinds';
import { registerHttpRuntime, wrapHttpHandlers } from './http-handler-wrapping';
import { ResilienceInterceptor } from './resilience.interceptor';
import { checkControllers, prototypeOf } from './controller-checks';
import { CriticalityMetadata, type CriticalityLevel } from './criticality-level';
import { bindHost, latestHost, unbindHost } from './prototype-bindings';

/*
 * Prototype wrappers are marked with `WRAPPED` (which holds the original), so a prototype shared by two applications
 * (request-scoped providers) is wrapped only once, and a class inheriting a wrapper is wrapped around the original,
 * not around it.
 */
type Host = ResilientExecution;
/** Per static GraphQL resolver instance, its application: its methods are wrapped on the prototype too. */
const instanceHosts = new WeakMap<object, Host>();

/**
 * Finds `@Resilient` / `@Hedged` methods on every provider at bootstrap (DiscoveryService + MetadataScanner) and
 * wraps them, so `this.inventory.get(id)` runs under the policy without the caller knowing. Controller handlers are
 * handled apart: HTTP routes get a handler wrapper that also receives the request (http-handler-wrapping.ts, done in
 * the constructor, before Nest registers the routes); microservice handlers and `@Sse()` streams go through
 * `ResilienceInterceptor`.
 *
 * It also fails the bootstrap when a decorator names a policy that does not exist, decorates a provider class (only
 * provider *methods* can be wrapped) or a controller method that is not a handler — mistakes that would otherwise
 * surface as 500s in production, or as a policy that silently never runs.
 *
 * Wrapping happens in `onModuleInit`, and ResilienceModule's hooks run before every other module's (see
 * {@link runLifecycleHooksFirst}): user lifecycle hooks already call wrapped methods. Constructors and factory
 * providers run earlier, before anything is wrapped. A wrapped method called inside another call (a decorated
 * handler, another decorated method) is linked to it: that call's abort aborts this one ({@link linkedTo}).
 */
@Injectable()
export class ResilienceExplorer implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Ballast');
  readonly #host: Host;
  /** The prototype-wrapped methods this application is bound to (prototype-bindings.ts). */
  readonly #bound: AnyMethod[] = [];

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    private readonly resilience: Resilience,
    private readonly streams: StreamGate,
    private readonly interceptor: ResilienceInterceptor,
    modules: ModulesContainer,
    @Optional() private readonly adapterHost?: HttpAdapterHost,
  ) {
    this.#host = new ResilientExecution(resilience, streams);
    runLifecycleHooksFirst(modules);
    // Before Nest registers the routes (at `init()`), which is when it reads the handler functions.
    wrapHttpHandlers(modules);
    // Before Nest connects the gateways (at `init()` too), which is when it reads their filters.
    attachGatewayFilter(modules);
  }

  async onModuleInit(): Promise<void> {
    // The application's wrapped handlers run its policies. Here, not in the constructor: a testing module gets its
    // HTTP adapter after compiling (`createNestApplication`); an application context or a pure microservice has none.
    const httpAdapter = this.adapterHost?.httpAdapter;
    registerHttpRuntime(httpAdapter?.getInstance(), this.interceptor);
    const known = new Set(await this.resilience.admin.policies());
    const problems: string[] = [];
    // A wrapped handler knows its application from an Express or a Fastify request only; on another adapter its
    // policy would silently never run.
    const adapterType = httpAdapter?.getType();
    let unknownPolicy = false;
    const check = (binding: ResilienceBinding | undefined, where: string): void => {
      if (binding !== undefined && !known.has(binding.policy)) {
        problems.push(`${where} uses unknown policy '${binding.policy}'`);
        unknownPolicy = true;
      }
    };
    const wrappedHandler = checkControllers(this.discovery.getControllers(), check, problems);
    if (
      wrappedHandler !== undefined &&
      adapterType !== undefined &&
      !['express', 'fastify'].includes(adapterType)
    )
      problems.push(
        `${wrappedHandler}: decorated HTTP handlers run on the Express and Fastify adapters only, ` +
          `and this application uses '${adapterType}'`,
      );
    let wrapped = 0;
    for (const wrapper of this.discovery.getProviders()) {
      const proxied = proxiedClassPrototype(wrapper);
      const proto = proxied ?? prototypeOf(wrapper);
      if (proto === undefined || proto === Object.prototype) continue;
      const names = this.scanner.getAllMethodNames(proto);
      // GraphQL resolvers are handlers too: like a controller, a resolver class may carry the decorator.
      const resolvers = names.filter((name) => isResolverMethod((proto as Record<string, unknown>)[name]));
      const classBinding = this.reflector.get(ResilienceBindingMetadata, proto.constructor);
      const classCriticality = this.reflector.get(CriticalityMetadata, proto.constructor);
      if (classBinding !== undefined && resolvers.length === 0) {
        problems.push(
          `${String(wrapper.name)}: @Resilient/@Hedged on a provider class is not supported; decorate its methods`,
        );
      }
      // A gateway's handlers and a resolver's subscriptions get a class-level level from the interceptor.
      const intercepted = names.some((name) => {
        const method = (proto as Record<string, object>)[name]!;
        return isMessageHandler(method) || isSubscriptionMethod(method);
      });
      if (classCriticality !== undefined && resolvers.length === 0 && !intercepted)
        problems.push(
          `${String(wrapper.name)}: @Criticality on a provider class is not supported; decorate its methods`,
        );
      for (const name of names) {
        const resolver = resolvers.includes(name);
        const binding = this.#bindingOf(proto, name) ?? (resolver ? classBinding : undefined);
        // A provider method binds its `@Criticality` itself, around the policy's call: Nest runs no interceptor
        // around a provider method, nor around a field resolver (unless `fieldResolverEnhancers` says so). A
        // gateway's message handler gets its level from the interceptor.
        const messageHandler = isMessageHandler((proto as Record<string, object>)[name]!);
        const criticality = messageHandler
          ? undefined
          : (this.#criticalityOf(proto, name) ?? (resolver ? classCriticality : undefined));
        if (binding === undefined) {
          if (criticality !== undefined) {
            this.#wrap(wrapper, proto, name, undefined, criticality, proxied !== undefined, resolver);
            wrapped++;
          }
          continue;
        }
        check(binding, `${String(wrapper.name)}.${name}`);
        // A gateway's message handler runs under its policy through ResilienceInterceptor, like an RPC handler;
        // Nest binds it before this runs, and it may return anything Nest accepts.
        if (messageHandler) continue;
        // A resolver is a handler: GraphQL awaits what it returns, so it may be declared synchronous.
        const declared = resolver ? undefined : declaredNonPromise(proto, name);
        if (declared !== undefined)
          problems.push(
            `${String(wrapper.name)}.${name} is declared to return ${declared}, but under @Resilient/@Hedged it ` +
              "returns a Promise: make it async (': Promise<…>'), or declare ': Observable<…>' with Observable " +
              "imported from the application's rxjs",
          );
        if (known.has(binding.policy)) {
          this.#wrap(wrapper, proto, name, binding, criticality, proxied !== undefined, resolver);
          wrapped++;
        }
      }
    }
    if (problems.length > 0) {
      throw new ResilienceError({
        kind: 'configuration',
        ...(unknownPolicy ? { code: ErrorCode.UNKNOWN_POLICY } : {}),
        message: `Ballast cannot start: ${problems.join('; ')}`,
        details: { problems },
      });
    }
    if (wrapped > 0) this.logger.log(`Wrapped ${wrapped} provider method(s) with resilience policies`);
  }

  /** Prototype-wrapped methods go back to the latest application still alive (after every user hook). */
  onApplicationShutdown(): void {
    unbindHost(this.#bound, this.#host);
    this.#bound.length = 0;
  }

  #bindingOf(proto: object, name: string): ResilienceBinding | undefined {
    const method: unknown = (proto as Record<string, unknown>)[name];
    return typeof method === 'function' ? this.reflector.get(ResilienceBindingMetadata, method) : undefined;
  }

  #criticalityOf(proto: object, name: string): CriticalityLevel | undefined {
    const method: unknown = (proto as Record<string, unknown>)[name];
    return typeof method === 'function' ? this.reflector.get(CriticalityMetadata, method) : undefined;
  }

  /**
   * Static providers get an own-property wrapper on their instance (the prototype stays untouched, so several
   * applications in one process — e.g. tests — each keep their own `Resilience`). Request-scoped and transient
   * providers have no instance yet, so their prototype method is wrapped, bound to the latest application; so are
   * the classes of proxy providers (`proxied`, see {@link proxiedClassPrototype}), whose real instances live elsewhere.
   */
  #wrap(
    wrapper: InstanceWrapper,
    proto: object,
    name: string,
    binding: ResilienceBinding | undefined,
    criticality: CriticalityLevel | undefined,
    proxied: boolean,
    resolver: boolean,
  ): void {
    // `proto[name]` may already be a prototype wrapper: this class's own (wrapped by an earlier application), or
    // one it inherits from a request-scoped or transient base class. Wrapping that again would run the policy twice.
    const current = (proto as Record<string, AnyMethod & { [WRAPPED]?: AnyMethod }>)[name]!;
    const original = current[WRAPPED] ?? current;
    const isStatic = wrapper.isDependencyTreeStatic() && !wrapper.isTransient && isObject(wrapper.instance);
    const host = this.#host;
    // @nestjs/graphql calls a static resolver's prototype method (`prototype[name]`, read at bootstrap) on its
    // instance, never the instance's own property: its methods are wrapped on the prototype, each instance still
    // running its own application's policies.
    if (resolver && isStatic) instanceHosts.set(wrapper.instance as object, host);
    else if (!proxied && isStatic) {
      const wrappedMethod = this.#wrapper(
        original,
        binding,
        () => host,
        returnsObservable(proto, name),
        { owner: proto.constructor, method: name },
        criticality,
      );
      // Modules that find their methods on the instance later (@nestjs/schedule's @Cron/@Interval/@Timeout, event
      // listeners) read the method's own metadata: without it a scheduled job silently never registered.
      copyMetadata(original, wrappedMethod);
      Object.defineProperty(wrapper.instance, name, {
        value: wrappedMethod,
        writable: true,
        configurable: true,
      });
      return;
    }
    if (current[WRAPPED] === undefined) {
      const wrappedMethod = this.#wrapper(
        original,
        binding,
        (self) => (isObject(self) ? instanceHosts.get(self) : undefined) ?? latestHost<Host>(original),
        returnsObservable(proto, name),
        { owner: proto.constructor, method: name },
        criticality,
      );
      Object.defineProperty(wrappedMethod, WRAPPED, { value: original });
      copyMetadata(original, wrappedMethod);
      Object.defineProperty(proto, name, { value: wrappedMethod, writable: true, configurable: true });
    }
    bindHost(original, host);
    this.#bound.push(original);
  }

  /**
   * Builds the replacement: async generators are breaker-gated, Observables stay lazy, the rest run as calls. With a
   * `criticality` (GraphQL resolvers), the level is bound around it all, and alone when there is no `binding`.
   */
  #wrapper(
    original: AnyMethod,
    binding: ResilienceBinding | undefined,
    host: (self: unknown) => Host,
    observable: boolean,
    where: DecoratedMethod,
    criticality?: CriticalityLevel,
  ): AnyMethod {
    const inner =
      binding === undefined ? original : this.#policyWrapper(original, binding, host, observable, where);
    if (criticality === undefined) return inner;
    return function (this: unknown, ...args: unknown[]) {
      return bindCriticality(criticality, () => inner.apply(this, args));
    };
  }

  #policyWrapper(
    original: AnyMethod,
    binding: ResilienceBinding,
    host: (self: unknown) => Host,
    observable: boolean,
    where: DecoratedMethod,
  ): AnyMethod {
    // A fixed route's options are built once; a route function is asked for each call, about its arguments only
    // (a provider method has no request or ExecutionContext). A failed answer refuses the call before any state.
    const routeOf = methodCallRoute(binding, where);
    const route = binding.route;
    const options = typeof route === 'function' ? undefined : runOptionsOf(binding, route);
    if (isAsyncGeneratorFunction(original)) {
      return function (this: unknown, ...args: unknown[]) {
        return host(this).gateIterable(
          binding,
          routeOf(args),
          () => original.apply(this, args) as AsyncIterable<unknown>,
        );
      };
    }
    if (observable) {
      return function (this: unknown, ...args: unknown[]) {
        return new Observable<unknown>((subscriber) => {
          const callRoute = routeOf(args);
          if (!callRoute.ok) return subscriber.error(callRoute.error);
          // A consumer that stops early (`take(1)`, `switchMap`, a cancelled RPC) aborts the call too, together
          // with the enclosing call's signal when there is one.
          const own = new AbortController();
          const parent = currentSignal();
          const signal = parent === undefined ? own.signal : AbortSignal.any([parent, own.signal]);
          const call = host(this).observe(
            () => original.apply(this, args) as Observable<unknown>,
            binding,
            callRoute.route,
            signal,
            new ObservableCall(subscriber),
          );
          return () => {
            if (!call.done) own.abort();
          };
        });
      };
    }
    return function (this: unknown, ...args: unknown[]) {
      const callRoute = routeOf(args);
      if (!callRoute.ok) return Promise.reject(callRoute.error);
      return host(this).runMethod(
        () => {
          const result = original.apply(this, args);
          if (isObservable(result)) throw observableWithoutMetadata(original.name);
          return result;
        },
        binding,
        callRoute.route,
        options,
      );
    };
  }
}

/**
 * Makes Nest call the lifecycle hooks of ResilienceModule's module before every other module's, so the wrapping in
 * `onModuleInit` is done before any user hook runs. Nest calls `onModuleInit` (then `onApplicationBootstrap`) module
 * by module, in decreasing `distance`, awaiting each module; every global module has distance `Number.MAX_VALUE`,
 * and ties keep the order in which modules were imported — so a user's `@Global()` module imported before
 * ResilienceModule ran its hooks first, calling decorated methods unwrapped. `Infinity` sorts before all of them.
 * Runs in the constructor: instances are all created before Nest computes that order (once, at `init()`). Shutdown
 * hooks run in the reverse order, so ResilienceModule's `onApplicationShutdown` now comes last, after every
 * user hook that may still make calls. (Nest's only other reader of `distance`, middleware ordering, concerns modules
 * with a `configure()` method; ResilienceModule has none.)
 */
function runLifecycleHooksFirst(modules: ModulesContainer): void {
  for (const moduleRef of modules.values())
    if (moduleRef.providers.has(ResilienceExplorer)) moduleRef.distance = Number.POSITIVE_INFINITY;
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}

function copyMetadata(from: object, to: object): void {
  for (const key of Reflect.getMetadataKeys(from) as unknown[])
    Reflect.defineMetadata(key, Reflect.getMetadata(key, from), to);
}
