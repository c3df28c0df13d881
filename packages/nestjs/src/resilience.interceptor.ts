import {
  Inject,
  Injectable,
  Logger,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { SSE_METADATA } from './nest-internals';
import { Reflector } from '@nestjs/core';
import { Resilience, parseDuration } from '@ballast/core';
import { Observable, defer, isObservable, throwError } from 'rxjs';
import { clientDisconnectSignal, requestHeader } from './client-disconnect';
import { CriticalityMetadata, parseCriticality, type CriticalityLevel } from './criticality-level';
import { RESILIENCE_MODULE_OPTIONS } from './resilience.module-definition';
import type { ResilienceModuleOptions } from './resilience-module-options.interface';
import {
  ResilienceBindingMetadata,
  isWrappedProviderMethod,
  type ResilienceBinding,
} from './resilience-binding';
import { DEFAULT_MAX_INBOUND_BUDGET, MALFORMED, inboundDeadlineExceeded, parseBudget } from './request-scope';
import { StreamGate } from './stream-gate';
import { abortOnCancel, grpcBudget, grpcCall, grpcExpired, grpcMetadata } from './grpc-call';
import { ClaimingCall, claimWhile, claimedByAnother, type Claimable } from './handler-claims';
import { ResilientExecution, fixedRoute, handlerCallRoute, type AnyMethod } from './resilient-execution';
import type { CallRoute } from './call-route';
import { isSubscriptionMethod } from './method-kinds';
import {
  BALLAST_INTERCEPTOR,
  isWrappedHttpHandler,
  type HttpHandlerPlan,
  type HttpHandlerRuntime,
} from './http-handler-wrapping';

type Handler = ReturnType<ExecutionContext['getHandler']>;
type ControllerClass = ReturnType<ExecutionContext['getClass']>;

/** Everything the interceptor needs to know about one handler, read from metadata once and cached. */
interface HandlerPlan {
  /** The controller class the plan was read for: an inherited handler is one function for several classes. */
  readonly owner: object;
  readonly binding: ResilienceBinding | undefined;
  /** The fixed route's answer, built once (resilient-execution.ts); undefined for a route function. */
  readonly route: CallRoute | undefined;
  readonly criticality: CriticalityLevel | undefined;
  /** `@Sse()` handlers stream: only the breaker gates them (SPEC §9, like async-generator providers). */
  readonly stream: boolean;
  /** A handler wrapped at bootstrap (http-handler-wrapping.ts) runs its policy itself: the interceptor passes. */
  readonly wrapped: boolean;
}

/**
 * Runs `@Resilient` / `@Hedged` handlers inside `resilience.run`, for every execution context (HTTP, RPC, WS).
 * The decorators attach it (`UseInterceptors`) to the handlers they mark, so undecorated routes never pay Nest's
 * interceptor step; `ResilienceModule` registers it globally as well only when the `headers` option is set (a
 * deadline or criticality header then applies to every route). Each attempt re-subscribes `next.handle()`, which
 * re-invokes the handler (Nest defers it), so retries and hedges really run the handler again and an observable
 * handler is never re-subscribed after completion. On HTTP the client's disconnect aborts the call's signal.
 *
 * @publicApi
 */
@Injectable()
export class ResilienceInterceptor implements NestInterceptor, HttpHandlerRuntime {
  /** @internal Recognised by the handler wrapping, which removes this interceptor from wrapped handlers. */
  static readonly [BALLAST_INTERCEPTOR] = true;
  /** By handler, the plan of the first class seen with it: one lookup per request for every handler. */
  readonly #plans = new WeakMap<object, HandlerPlan>();
  /** By class, then handler: the plans of inherited handlers for the other classes that route to them. */
  readonly #inheritedPlans = new WeakMap<object, WeakMap<object, HandlerPlan>>();
  readonly #deadlineHeader: string | undefined;
  readonly #criticalityHeader: string | undefined;
  readonly #readsHeaders: boolean;
  readonly #maxInboundBudget: number;
  /** The execution core every decorated call of this application runs through (resilient-execution.ts). */
  readonly #execution: ResilientExecution;
  #warnedMalformed = false;

  constructor(
    resilience: Resilience,
    private readonly reflector: Reflector,
    streams: StreamGate,
    @Inject(RESILIENCE_MODULE_OPTIONS) options: ResilienceModuleOptions,
  ) {
    this.#execution = new ResilientExecution(resilience, streams);
    this.#deadlineHeader = options.headers?.deadline?.toLowerCase();
    this.#criticalityHeader = options.headers?.criticality?.toLowerCase();
    this.#readsHeaders = this.#deadlineHeader !== undefined || this.#criticalityHeader !== undefined;
    const max = options.headers?.maxInboundBudget;
    this.#maxInboundBudget = max === undefined ? DEFAULT_MAX_INBOUND_BUDGET : parseDuration(max);
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const plan = this.#plan(context);
    if (plan.wrapped) return next.handle();
    // An undecorated handler with no headers to read passes straight through (the common case, on every route).
    if (plan.binding === undefined && plan.criticality === undefined && !this.#readsHeaders)
      return next.handle();
    // Inside another entry's call on this handler: that entry runs the policy (handler-claims.ts).
    if (claimedByAnother(context, this)) return next.handle();
    const http = context.getType() === 'http';
    // The request is the first handler argument on HTTP; `switchToHttp()` would build three closures per call.
    const request: unknown = http ? context.getArgByIndex(0) : undefined;
    // gRPC carries the caller's deadline natively (grpc-timeout, read by grpc-js) and criticality as metadata.
    const grpc = http ? undefined : grpcCall(context);
    const budget = http
      ? this.#budgetOf(request)
      : grpcBudget(this.#readsHeaders ? grpc : undefined, this.#maxInboundBudget);
    // The caller has already given up: 504 / DEADLINE_EXCEEDED without running the handler (SPEC §14.4).
    if (budget !== undefined && budget <= 0) return throwError(http ? inboundDeadlineExceeded : grpcExpired);
    const criticality = http
      ? this.#criticalityOf(request, plan.criticality)
      : grpc !== undefined && this.#criticalityHeader !== undefined
        ? (parseCriticality(grpcMetadata(grpc.metadata, this.#criticalityHeader)) ?? plan.criticality)
        : plan.criticality;
    const binding = plan.binding;
    if (binding === undefined) {
      if (budget === undefined && criticality === undefined) return next.handle();
      // No policy here, but the handler's own calls (decorated providers, resilience.run) see the deadline/level.
      // Nothing to claim: another Ballast entry on this handler reads the same plan and at most binds the same scope.
      return new Observable((subscriber) =>
        this.#execution.inScope(budget, criticality, () => next.handle().subscribe(subscriber)),
      );
    }
    // A stream is admitted per subscription under its call's route; a failed route function errors it (no permit).
    if (plan.stream)
      return claimWhile(
        context,
        this,
        defer(() => {
          const route = handlerCallRoute(binding, plan.route, context, request);
          if (!route.ok) return throwError(() => route.error);
          return this.#execution.gateObservable(binding, route.route, () => next.handle());
        }),
      );
    return this.#run(
      context,
      binding,
      plan.route,
      request,
      next,
      http ? clientDisconnectSignal(request) : undefined,
      budget,
      criticality,
    );
  }

  #run(
    context: Claimable,
    binding: ResilienceBinding,
    fixed: CallRoute | undefined,
    request: unknown,
    next: CallHandler,
    disconnect: AbortSignal | undefined,
    budget: number | undefined,
    criticality: CriticalityLevel | undefined,
  ): Observable<unknown> {
    return new Observable<unknown>((subscriber) => {
      // Each subscription is a call of its own, with its own route; a failed route function refuses it (no state).
      const route = handlerCallRoute(binding, fixed, context, request);
      if (!route.ok) return subscriber.error(route.error);
      // Only a consumer that can unsubscribe early (RPC, WS) needs a signal of its own; HTTP has the connection's.
      // A gRPC caller's cancellation aborts it too.
      const own = disconnect === undefined ? new AbortController() : undefined;
      if (own !== undefined) abortOnCancel(grpcCall(context), own);
      // Claims the context before the first attempt reaches the entries listed after this one.
      const call = this.#execution.observe(
        () => next.handle(),
        binding,
        route.route,
        disconnect ?? own!.signal,
        new ClaimingCall(subscriber, context, this),
        budget,
        criticality,
      );
      return () => {
        // The consumer went away (or heard the end): a re-subscription from now on is a new call.
        call.release();
        // The consumer went away first (an RPC caller cancelled, a gateway disconnected): stop the work too.
        if (own !== undefined && !call.done) own.abort();
      };
    });
  }

  /**
   * @internal The HTTP request path of a handler wrapped at bootstrap (http-handler-wrapping.ts): what `intercept`
   * does, called by the handler itself rather than through Nest's interceptor chain. Each attempt calls the handler
   * again with the arguments Nest resolved once; `@CallSignal()` parameters get the attempt's signal.
   */
  runRequest(
    plan: HttpHandlerPlan,
    request: unknown,
    handler: AnyMethod,
    self: unknown,
    args: unknown[],
    context?: ExecutionContext,
  ): unknown {
    const budget = this.#budgetOf(request);
    if (budget !== undefined && budget <= 0) throw inboundDeadlineExceeded();
    const criticality = this.#criticalityOf(request, plan.criticality);
    const binding = plan.binding;
    // Only a decorated handler is wrapped: without a binding it has a criticality, so there is a scope to bind.
    if (binding === undefined) {
      const result = this.#execution.inScope(budget, criticality, () => handler.apply(self, args));
      if (!isObservable(result)) return result;
      return new Observable((subscriber) =>
        this.#execution.inScope(budget, criticality, () => result.subscribe(subscriber)),
      );
    }
    // A route function gets Nest's ExecutionContext: the wrapper asks Nest for it then (http-handler-wrapping.ts).
    const route = handlerCallRoute(binding, plan.route, context!, request);
    if (!route.ok) throw route.error;
    return this.#execution.runHandler(
      handler,
      self,
      args,
      plan.signalIndices,
      binding,
      route.route,
      clientDisconnectSignal(request),
      budget,
      criticality,
    );
  }

  #budgetOf(request: unknown): number | undefined {
    if (this.#deadlineHeader === undefined) return undefined;
    const budget = parseBudget(requestHeader(request, this.#deadlineHeader), this.#maxInboundBudget);
    if (budget !== MALFORMED) return budget;
    // Ignored, never an error for the caller; said once per header, so a hostile client cannot flood the log.
    if (!this.#warnedMalformed) {
      this.#warnedMalformed = true;
      new Logger('ResilienceModule').warn(
        `ignoring a malformed ${this.#deadlineHeader} header (a number of ms is expected); further ones are ignored silently`,
      );
    }
    return undefined;
  }

  #criticalityOf(request: unknown, fallback: CriticalityLevel | undefined): CriticalityLevel | undefined {
    if (this.#criticalityHeader === undefined) return fallback;
    return parseCriticality(requestHeader(request, this.#criticalityHeader)) ?? fallback;
  }

  #plan(context: ExecutionContext): HandlerPlan {
    const handler = context.getHandler();
    const owner = context.getClass();
    const plan = this.#plans.get(handler);
    if (plan !== undefined && plan.owner === owner) return plan;
    return this.#inheritedPlan(handler, owner, plan);
  }

  /**
   * The plan of a handler first seen (then `first` is undefined) or seen again for another class: controllers that
   * inherit a handler (a CRUD base class) route to the same function, each with its own class-level decorators.
   */
  #inheritedPlan(handler: Handler, owner: ControllerClass, first: HandlerPlan | undefined): HandlerPlan {
    if (first === undefined) {
      const plan = this.#read(handler, owner);
      this.#plans.set(handler, plan);
      return plan;
    }
    let byHandler = this.#inheritedPlans.get(owner);
    if (byHandler === undefined) this.#inheritedPlans.set(owner, (byHandler = new WeakMap()));
    let plan = byHandler.get(handler);
    if (plan === undefined) byHandler.set(handler, (plan = this.#read(handler, owner)));
    return plan;
  }

  #read(handler: Handler, owner: ControllerClass): HandlerPlan {
    // A GraphQL resolver (or another provider method Nest calls through its enhancers) that the explorer wrapped
    // runs its policy and binds its criticality itself; running the policy here too would nest two calls
    // (N² attempts).
    if (isWrappedProviderMethod(handler))
      return {
        owner,
        binding: undefined,
        route: undefined,
        criticality: undefined,
        stream: false,
        wrapped: false,
      };
    const targets = [handler, owner];
    // A GraphQL subscription is not a call: a class-level @Resilient covers the resolver's queries, mutations and
    // fields, not the subscriptions next to them (a decorator on the @Subscription method itself still applies).
    const binding = isSubscriptionMethod(handler)
      ? this.reflector.get(ResilienceBindingMetadata, handler)
      : this.reflector.getAllAndOverride(ResilienceBindingMetadata, targets);
    return {
      owner,
      binding,
      route: fixedRoute(binding),
      criticality: this.reflector.getAllAndOverride(CriticalityMetadata, targets),
      stream: this.reflector.get<boolean | undefined>(SSE_METADATA, handler) === true,
      wrapped: isWrappedHttpHandler(handler),
    };
  }
}

/**
 * The interceptor class-level decorators attach (`@Resilient`, `@Hedged`, `@Criticality` on a controller, resolver or
 * gateway): the same logic as {@link ResilienceInterceptor}, as an entry of its own in a handler's chain, so a call
 * claimed by one of the two entries tells the other apart from a re-invocation of itself (handler-claims.ts).
 */
@Injectable()
export class ResilienceControllerInterceptor extends ResilienceInterceptor {}
