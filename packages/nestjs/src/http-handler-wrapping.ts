import {
  CUSTOM_ROUTE_ARGS_METADATA,
  INTERCEPTORS_METADATA,
  METHOD_METADATA,
  PATH_METADATA,
  ROUTE_ARGS_METADATA,
  SSE_METADATA,
  RouteParamtypes,
} from './nest-internals';
import type { ExecutionContext } from '@nestjs/common';
import { MetadataScanner, Reflector, type ModulesContainer } from '@nestjs/core';
import { ResilienceError } from '@ballast/core';
import { CriticalityMetadata, type CriticalityLevel } from './criticality-level';
import { ResilienceBindingMetadata, type ResilienceBinding } from './resilience-binding';
import { callSignalFactory } from './call-signal';
import type { CallRoute } from './call-route';
import { fixedRoute } from './resilient-execution';
import { isMicroserviceHandler } from './method-kinds';

type AnyMethod = (this: unknown, ...args: unknown[]) => unknown;
type ControllerClass = abstract new (...args: never[]) => unknown;

/** What one HTTP handler of one controller class runs under, read from its decorators once at bootstrap. */
export interface HttpHandlerPlan {
  readonly binding: ResilienceBinding | undefined;
  readonly criticality: CriticalityLevel | undefined;
  /** The fixed route's answer, built once (resilient-execution.ts); undefined for a route function. */
  readonly route: CallRoute | undefined;
  /** Where Nest puts the request (a parameter Ballast adds to the route's parameter metadata). */
  readonly requestIndex: number;
  /** The `@CallSignal()` parameters: their value is the attempt's signal, set inside each attempt. */
  readonly signalIndices: readonly number[];
}

/** The part of `ResilienceInterceptor` a wrapped handler calls: the same request logic, without Nest's chain. */
export interface HttpHandlerRuntime {
  runRequest(
    plan: HttpHandlerPlan,
    request: unknown,
    handler: AnyMethod,
    self: unknown,
    args: unknown[],
    context?: ExecutionContext,
  ): unknown;
}

/** Marks Ballast's handler wrappers; holds the original method. */
const HTTP_WRAPPED = Symbol('ballast:http-handler');

interface WrapperState {
  readonly original: AnyMethod;
}

/**
 * Each application's runtime, by its HTTP server instance (the Express app, the Fastify instance). A request names
 * the application that received it (`req.app`, `request.server`), so a handler runs its own application's policies
 * whatever the controller instance — a static one, one Nest creates per request, one shared by two applications
 * alive at once (tests) — and a request of an application that does not import `ResilienceModule` is refused.
 */
const runtimes = new WeakMap<object, HttpHandlerRuntime>();

/** Registers an application's runtime under its HTTP server instance (`httpAdapter.getInstance()`). */
export function registerHttpRuntime(server: unknown, runtime: HttpHandlerRuntime): void {
  if (isObject(server) || typeof server === 'function') runtimes.set(server, runtime);
}

/**
 * The server instance of an Express or Fastify request, or undefined when `value` is not one: the router passes
 * the request last, while a direct call of the method (another method, a unit test) passes its own arguments.
 */
function serverOf(value: unknown): object | undefined {
  if (!isObject(value)) return undefined;
  const r = value as { app?: unknown; res?: unknown; server?: unknown; raw?: unknown };
  if (typeof r.app === 'function' && isObject(r.res)) return r.app; // Express
  if (isObject(r.server) && isObject(r.raw)) return r.server; // Fastify (inject() included)
  return undefined;
}

function notInApplication(owner: ControllerClass, name: string): ResilienceError {
  return new ResilienceError({
    kind: 'configuration',
    message:
      `${owner.name}.${name} has @Resilient/@Hedged/@Criticality, but the application serving it does not import ` +
      'ResilienceModule (ResilienceModule.forRoot or forRootAsync)',
  });
}

type Wrapped = AnyMethod & { [HTTP_WRAPPED]?: WrapperState };

const reflector = new Reflector();
const scanner = new MetadataScanner();

/** True for a handler wrapper installed by {@link wrapHttpHandlers}: the interceptor lets those pass through. */
export function isWrappedHttpHandler(handler: unknown): boolean {
  return typeof handler === 'function' && (handler as Wrapped)[HTTP_WRAPPED] !== undefined;
}

/**
 * Runs `@Resilient` / `@Hedged` / `@Criticality` HTTP handlers without Nest's interceptor step. On Node 20 that step
 * alone — an RxJS chain, a ReplaySubject and two `AsyncResource.bind` per request — costs ≈ 30 µs, about a third
 * of a small Nest request and ten times the policy (BENCHMARKS.md), so a decorated route paid far more for the
 * interceptor than for its resilience. Instead, before Nest registers the routes (the explorer's constructor), every
 * decorated route handler of every controller class gets an own-property wrapper on that class's prototype, which
 * calls the interceptor's request logic ({@link HttpHandlerRuntime}) directly:
 *
 * - the wrapper carries the original's metadata (path, guards, pipes, filters, the user's interceptors…), minus
 *   `ResilienceInterceptor`; the class-level entry the decorators added is removed too, and kept on the class's
 *   handlers that still need it (microservice handlers and `@Sse()` streams, which stay on the interceptor);
 * - the request reaches the wrapper as one more handler argument (a `REQUEST` parameter at the end of the route's
 *   parameter metadata — Nest's `ExecutionContext` instead when the route is a function of the call) that the
 *   wrapper removes before calling the handler;
 * - each controller class gets its own wrapper (class-level decorators differ between classes sharing an inherited
 *   handler), and a class whose inherited handler is wrapped but which has no decorator of its own gets the original.
 *
 * - a call that does not come from Nest's router (another method of the controller, a unit test) runs the method
 *   as written: no policy, no argument taken away;
 * - a route that is also a microservice handler (`@MessagePattern`, `@EventPattern` on the same method, in a hybrid
 *   application) is not wrapped: it keeps the interceptor, which runs its policy on both paths.
 *
 * Prototypes are shared by every application in the process (tests boot many), so this runs once per class; each
 * application registers its runtime under its HTTP server ({@link registerHttpRuntime}).
 */
export function wrapHttpHandlers(modules: ModulesContainer): void {
  for (const moduleRef of modules.values())
    for (const wrapper of moduleRef.controllers.values()) {
      const metatype = wrapper.metatype as { prototype?: unknown } | null | undefined;
      if (typeof metatype === 'function' && isObject(metatype.prototype))
        wrapClass(metatype as unknown as ControllerClass, metatype.prototype);
    }
}

function wrapClass(owner: ControllerClass, proto: object): void {
  const stayOnInterceptor: AnyMethod[] = [];
  let wrappedAny = false;
  for (const name of scanner.getAllMethodNames(proto)) {
    const current = (proto as Record<string, Wrapped>)[name];
    if (typeof current !== 'function') continue;
    const state = current[HTTP_WRAPPED];
    if (state !== undefined && Object.prototype.hasOwnProperty.call(proto, name)) {
      wrappedAny = true; // wrapped by an earlier application
      continue;
    }
    const original = state?.original ?? current;
    const targets = [original, owner];
    const binding = reflector.getAllAndOverride<ResilienceBinding | undefined>(
      ResilienceBindingMetadata,
      targets,
    );
    const criticality = reflector.getAllAndOverride<CriticalityLevel | undefined>(
      CriticalityMetadata,
      targets,
    );
    if (binding === undefined && criticality === undefined) {
      // Inherits a wrapper made for a decorated base class: route to the plain handler instead.
      if (state !== undefined) define(proto, name, original);
      continue;
    }
    // A route that is also a microservice handler is called by the connected microservice too, with RPC arguments
    // the wrapper cannot tell from a direct call: it would run without its policy there (and the request parameter
    // added to the shared parameter metadata would replace the payload). It stays on the interceptor, on both paths.
    if (!isHttpRoute(original) || isMicroserviceHandler(original)) {
      stayOnInterceptor.push(original);
      continue;
    }
    define(proto, name, wrapHandler(owner, name, original, { binding, criticality }));
    wrappedAny = true;
  }
  if (!wrappedAny) return;
  // The decorators' class-level `UseInterceptors` would still send every handler through Nest's interceptor step.
  const classLevel = Reflect.getMetadata(INTERCEPTORS_METADATA, owner) as unknown[] | undefined;
  if (classLevel === undefined || !classLevel.some(isBallastInterceptor)) return;
  Reflect.defineMetadata(INTERCEPTORS_METADATA, classLevel.filter(notBallastInterceptor), owner);
  const interceptor = classLevel.find(isBallastInterceptor);
  for (const handler of stayOnInterceptor) {
    const own = (Reflect.getMetadata(INTERCEPTORS_METADATA, handler) as unknown[] | undefined) ?? [];
    if (!own.some(isBallastInterceptor))
      Reflect.defineMetadata(INTERCEPTORS_METADATA, [interceptor, ...own], handler);
  }
}

function wrapHandler(
  owner: ControllerClass,
  name: string,
  original: AnyMethod,
  decorators: Pick<HttpHandlerPlan, 'binding' | 'criticality'>,
): Wrapped {
  // Inherited from a base class that is a controller too, the metadata already holds that class's request parameter.
  const params: Record<string, RouteParam> = {};
  const inherited = (Reflect.getMetadata(ROUTE_ARGS_METADATA, owner, name) ?? {}) as Record<
    string,
    RouteParam
  >;
  for (const [key, param] of Object.entries(inherited)) if (param.data !== REQUEST_PARAM) params[key] = param;
  let requestIndex = original.length;
  const signalIndices: number[] = [];
  for (const [key, param] of Object.entries(params)) {
    requestIndex = Math.max(requestIndex, param.index + 1);
    if (key.includes(CUSTOM_ROUTE_ARGS_METADATA) && param.factory === callSignalFactory)
      signalIndices.push(param.index);
  }
  // A route function is asked about the call with Nest's ExecutionContext (SPEC §14.3): such a handler takes the
  // context instead of the request (a parameter of its own whose factory Nest hands the context; it reaches global
  // pipes as `@CallSignal()` does, with no metatype). Other handlers keep the REQUEST parameter, which costs less.
  const withContext = typeof decorators.binding?.route === 'function';
  const param = withContext
    ? {
        [`${CONTEXT_PARAM_TYPE}${CUSTOM_ROUTE_ARGS_METADATA}:${requestIndex}`]: {
          index: requestIndex,
          factory: handlerContext,
          data: REQUEST_PARAM,
          pipes: [],
        },
      }
    : {
        [`${RouteParamtypes.REQUEST}:${requestIndex}`]: {
          index: requestIndex,
          data: REQUEST_PARAM,
          pipes: [],
        },
      };
  Reflect.defineMetadata(ROUTE_ARGS_METADATA, { ...params, ...param }, owner, name);
  const plan: HttpHandlerPlan = {
    ...decorators,
    route: fixedRoute(decorators.binding),
    requestIndex,
    signalIndices,
  };
  const state: WrapperState = { original };
  const wrapped: Wrapped = function (this: unknown, ...args: unknown[]): unknown {
    // Nest's router passes exactly requestIndex + 1 arguments, the request (or its context) last.
    if (args.length === requestIndex + 1) {
      const context = withContext ? contextOf(args[requestIndex]) : undefined;
      const request = withContext ? context?.getArgByIndex(0) : args[requestIndex];
      const server = serverOf(request);
      if (server !== undefined) {
        const runtime = runtimes.get(server);
        if (runtime === undefined) throw notInApplication(owner, name);
        // The request is the last argument: pop() is inlined by V8, where `args.length = n` calls into the runtime.
        args.pop();
        return runtime.runRequest(plan, request, original, this, args, context);
      }
    }
    return original.apply(this, args);
  };
  Object.defineProperty(wrapped, 'name', { value: original.name });
  Object.defineProperty(wrapped, HTTP_WRAPPED, { value: state });
  for (const key of Reflect.getOwnMetadataKeys(original) as unknown[])
    Reflect.defineMetadata(key, Reflect.getOwnMetadata(key, original), wrapped);
  const interceptors = Reflect.getOwnMetadata(INTERCEPTORS_METADATA, original) as unknown[] | undefined;
  if (interceptors !== undefined)
    Reflect.defineMetadata(INTERCEPTORS_METADATA, interceptors.filter(notBallastInterceptor), wrapped);
  return wrapped;
}

interface RouteParam {
  readonly index: number;
  readonly data?: unknown;
  readonly factory?: unknown;
}

/** The `data` of the request parameter Ballast adds (Nest ignores `data` for `REQUEST`), to recognise it. */
const REQUEST_PARAM = 'ballast:request';

/** The parameter type of the context parameter (a custom one: the prefix of its metadata key). */
const CONTEXT_PARAM_TYPE = 'ballastContext';

/** The factory of the context parameter: Nest calls it with the request's ExecutionContext. */
function handlerContext(_data: unknown, context: ExecutionContext): ExecutionContext {
  return context;
}

/** `value` when it is an ExecutionContext (what {@link handlerContext} gave), else undefined (a direct call). */
function contextOf(value: unknown): ExecutionContext | undefined {
  const c = value as Partial<ExecutionContext> | null | undefined;
  return typeof c?.getArgByIndex === 'function' && typeof c.getHandler === 'function'
    ? (c as ExecutionContext)
    : undefined;
}

/** An HTTP route handler that returns a response (`@Sse()` streams stay on the interceptor and its stream gate). */
function isHttpRoute(method: object): boolean {
  return (
    Reflect.getMetadata(PATH_METADATA, method) !== undefined &&
    Reflect.getMetadata(METHOD_METADATA, method) !== undefined &&
    Reflect.getMetadata(SSE_METADATA, method) !== true
  );
}

/** `ResilienceInterceptor` carries this static marker (importing the class here would make an import cycle). */
export const BALLAST_INTERCEPTOR = Symbol.for('ballast:resilience-interceptor');

function isBallastInterceptor(entry: unknown): boolean {
  return (
    typeof entry === 'function' &&
    (entry as { [BALLAST_INTERCEPTOR]?: boolean })[BALLAST_INTERCEPTOR] === true
  );
}

function notBallastInterceptor(entry: unknown): boolean {
  return !isBallastInterceptor(entry);
}

function define(proto: object, name: string, value: AnyMethod): void {
  Object.defineProperty(proto, name, { value, writable: true, configurable: true, enumerable: false });
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}
