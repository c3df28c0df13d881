import type { ExecutionContext } from '@nestjs/common';
import { currentSignal, type CallContext, type Resilience, type RunOptions } from '@ballast/core';
import { isObservable, type Observable } from 'rxjs';
import { runOptionsOf, type ResilienceBinding, type RouteFunction } from './resilience-binding';
import { handlerRoute, routeOfCall, type CallRoute, type DecoratedMethod } from './call-route';
import { inScope } from './request-scope';
import { collect, startObservable, type ObservableCall } from './observable-call';
import type { StreamGate } from './stream-gate';
import type { CriticalityLevel } from './criticality-level';

export type AnyMethod = (this: unknown, ...args: unknown[]) => unknown;

/**
 * The one execution path of a decorated method, whichever way it is reached: Nest's interceptor (handlers of every
 * transport), the wrapped HTTP handler (http-handler-wrapping.ts) and the wrapped provider method
 * (resilience.explorer.ts). The entry points read what only they can see — the request's headers, the gRPC call,
 * the method's arguments — and hand this the call: it resolves the call's route (the binding's, or its route
 * function's answer: call-route.ts), binds the deadline and criticality around the work, builds the run options and
 * runs the call as a Promise, an Observable replayed to one subscriber, or a breaker-gated stream (an `@Sse()`
 * Observable, an async generator: SPEC §9).
 *
 * One per application (the interceptor's and the explorer's hosts hold it), so nothing here allocates per call
 * beyond what the entry point asks for: a fixed route, the common case, builds no route and no closure.
 */
export class ResilientExecution {
  constructor(
    private readonly resilience: Resilience,
    private readonly streams: StreamGate,
  ) {}

  /** Runs `fn` with the call's deadline (a budget in ms) and criticality bound; `fn()` alone when neither is set. */
  inScope<T>(budget: number | undefined, criticality: CriticalityLevel | undefined, fn: () => T): T {
    return inScope(budget, criticality, this.resilience.clock, fn);
  }

  /**
   * A provider method's call as a Promise: each attempt runs `attempt`, linked to the enclosing call ({@link
   * linkedTo}); `fixed` is the run options of a fixed route, built once when the method was wrapped.
   */
  runMethod(
    attempt: () => unknown,
    binding: ResilienceBinding,
    route: string | undefined,
    fixed: RunOptions<unknown> | undefined,
  ): Promise<unknown> {
    return this.resilience.run(attempt, linkedTo(fixed ?? runOptionsOf(binding, route)));
  }

  /**
   * A wrapped HTTP handler's call: each attempt calls the handler again with the arguments Nest resolved once, the
   * `@CallSignal()` parameters (`signals`) set to the attempt's signal; an Observable it returns (or resolves to) is
   * that attempt's work, gathered and answered as Nest would.
   */
  runHandler(
    handler: AnyMethod,
    self: unknown,
    args: unknown[],
    signals: readonly number[],
    binding: ResilienceBinding,
    route: string | undefined,
    signal: AbortSignal | undefined,
    budget: number | undefined,
    criticality: CriticalityLevel | undefined,
  ): Promise<unknown> {
    const attempt = (ctx: CallContext): unknown => {
      let attemptArgs = args;
      if (signals.length > 0) {
        attemptArgs = args.slice(); // hedged attempts run concurrently, each with its own signal
        for (const i of signals) attemptArgs[i] = ctx.signal;
      }
      const result = handler.apply(self, attemptArgs);
      if (isObservable(result)) return collect(result, ctx.signal);
      // An async handler may resolve to an Observable (Nest subscribes to it): that is still this attempt's work.
      if (result instanceof Promise)
        return result.then((value: unknown) => (isObservable(value) ? collect(value, ctx.signal) : value));
      return result;
    };
    const options = runOptionsOf(binding, route, signal);
    if (budget === undefined && criticality === undefined) return this.resilience.run(attempt, options);
    return inScope(budget, criticality, this.resilience.clock, () => this.resilience.run(attempt, options));
  }

  /**
   * The call as an Observable: each attempt subscribes `source()` afresh, and `call` replays the winning attempt's
   * values to its subscriber (observable-call.ts); `signal` is the call's own (the connection's, the consumer's).
   * Returns `call`, whose `done` tells a teardown whether there is still work to abort.
   */
  observe<C extends ObservableCall>(
    source: () => Observable<unknown>,
    binding: ResilienceBinding,
    route: string | undefined,
    signal: AbortSignal,
    call: C,
    budget?: number,
    criticality?: CriticalityLevel,
  ): C {
    const options = runOptionsOf(binding, route, signal);
    if (budget === undefined && criticality === undefined)
      startObservable(this.resilience, source, options, call);
    else
      inScope(budget, criticality, this.resilience.clock, () =>
        startObservable(this.resilience, source, options, call),
      );
    return call;
  }

  /** An `@Sse()` handler's stream, admitted by the policy's breaker under the call's route (stream-gate.ts). */
  gateObservable<T>(
    binding: ResilienceBinding,
    route: string | undefined,
    open: () => Observable<T>,
  ): Observable<T> {
    return this.streams.gateObservable(binding, route, open);
  }

  /** An async-generator method's stream, admitted when iteration starts; a failed route is thrown then. */
  gateIterable<T>(
    binding: ResilienceBinding,
    route: CallRoute,
    open: () => AsyncIterable<T>,
  ): AsyncIterable<T> {
    return this.streams.gateIterable(binding, route, open);
  }
}

/**
 * The answer of the binding's fixed route, built once per decorated method (a plan, a wrapper), so a call with a fixed
 * route — the common case — builds nothing; undefined when the route is a function, asked for each call.
 */
export function fixedRoute(binding: ResilienceBinding | undefined): CallRoute | undefined {
  if (binding === undefined || typeof binding.route === 'function') return undefined;
  return { ok: true, route: binding.route };
}

/**
 * The route of one call of a handler Nest calls through its pipeline: `fixed` ({@link fixedRoute}), or the route
 * function's answer for the call (Nest's arguments, its ExecutionContext and, on HTTP, the request).
 */
export function handlerCallRoute(
  binding: ResilienceBinding,
  fixed: CallRoute | undefined,
  context: ExecutionContext,
  request: unknown,
): CallRoute {
  return fixed ?? handlerRoute(binding, binding.route as RouteFunction, context, request);
}

/**
 * The route of each call of a provider method: {@link fixedRoute}, or the route function's answer about the call's
 * arguments only (a provider method has no request or ExecutionContext).
 */
export function methodCallRoute(
  binding: ResilienceBinding,
  where: DecoratedMethod,
): (args: unknown[]) => CallRoute {
  const fixed = fixedRoute(binding);
  if (fixed !== undefined) return () => fixed;
  return (args) => routeOfCall(binding, binding.route as RouteFunction, { args }, where);
}

/**
 * The run options of one call of a wrapped provider method: linked to the enclosing call, if any (a decorated
 * handler, another decorated method, the user's own `resilience.run`), so that call's abort — its attempt timeout,
 * deadline, a lost hedge race, the client's disconnect — aborts this one too and reaches the method's
 * `currentSignal()`. Core's `run` does not link to the enclosing call by itself. Read at call time: each attempt of
 * the enclosing call has its own signal. Outside any call `currentSignal()` is a single AsyncLocalStorage lookup that
 * allocates nothing; inside one it makes core create the enclosing attempt's AbortController (lazily, ~5 µs) — the
 * price of propagating.
 */
export function linkedTo(options: RunOptions<unknown>): RunOptions<unknown> {
  const signal = currentSignal();
  return signal === undefined ? options : { ...options, signal };
}
