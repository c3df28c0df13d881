import type { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AMBIENT_SIGNAL, type RunOptions } from '@ballast/core';

/** The HTTP request a route function sees: Express's or Fastify's, both of which carry Node's headers. */
export interface ResilientRequest {
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly [field: string]: unknown;
}

/**
 * What a route function is asked about: one call of the decorated method. On a handler that runs through Nest's
 * pipeline (HTTP, microservices, WebSockets), `args` are the handler's arguments as Nest passes them
 * (`context.getArgs()`: `[request, response, next]` on HTTP, `[data, context]` on RPC, `[client, data]` on
 * WebSockets), `context` is Nest's `ExecutionContext` and `request` the HTTP request. On a provider method, and on a
 * GraphQL resolver (a provider Ballast wraps itself), `args` are the arguments the method is called with, and there
 * is neither `context` nor `request`.
 */
export interface ResilientCall {
  readonly args: readonly unknown[];
  readonly request?: ResilientRequest | undefined;
  readonly context?: ExecutionContext | undefined;
}

/**
 * A route computed from the call: a string is that key's own state (a tenant's breaker, an endpoint's bucket),
 * `undefined` the policy's default key (as without `route`). Core bounds the keys per policy (`maxKeysPerPolicy`).
 */
export type RouteFunction = (call: ResilientCall) => string | undefined;

/** Options shared by `@Resilient` and `@Hedged`. */
export interface ResilientOptions {
  /**
   * Partitions the policy's per-key state (breaker, bucket, limits). Without it the state is policy-wide, so
   * every handler using the policy shares one breaker — right when they call the same dependency. A function
   * computes the route of each call from the call itself ({@link RouteFunction}).
   */
  readonly route?: string | RouteFunction | undefined;
}

/** What `@Resilient` / `@Hedged` record: one metadata object, so the method's binding wins over the class's as a whole. */
export interface ResilienceBinding {
  readonly policy: string;
  /** A fixed route, or the function that computes each call's (call-route.ts). */
  readonly route: string | RouteFunction | undefined;
  /** True only for `@Hedged`: hedging re-runs the work, which is safe only for idempotent reads. */
  readonly hedge: boolean;
}

/** Typed metadata (Reflector.createDecorator), read with `reflector.getAllAndOverride(ResilienceBindingMetadata, …)`. */
export const ResilienceBindingMetadata = Reflector.createDecorator<ResilienceBinding>({
  key: 'ballast:resilient',
});

/**
 * The `run` options of a bound call — the one place the three ways a decorated method runs (the interceptor, the
 * wrapped HTTP handler, the wrapped provider method) turn a binding into a call; `route` is the call's (the
 * binding's string, or its function's answer: call-route.ts), `signal` the call's own (the client's disconnect, an
 * RPC consumer leaving), when it has one.
 */
export function runOptionsOf(
  binding: ResilienceBinding,
  route: string | undefined,
  signal?: AbortSignal,
): RunOptions<unknown> & { readonly [AMBIENT_SIGNAL]: true } {
  // A decorated method gets its signal from currentSignal() only (it receives nothing new, SPEC §9): its call runs
  // in a context frame of its own even when nothing could abort it, where core would leave it in its caller's.
  return signal === undefined
    ? { policy: binding.policy, route, hedge: binding.hedge, [AMBIENT_SIGNAL]: true }
    : { policy: binding.policy, route, hedge: binding.hedge, signal, [AMBIENT_SIGNAL]: true };
}

/**
 * Marks the provider-method wrappers the explorer installs on a prototype (and holds the original). Such a method
 * runs its policy itself: the interceptor, which `@Resilient` also attaches, must not run it again around it.
 */
export const PROVIDER_WRAPPED = Symbol('ballast:wrapped');

/** A provider method wrapped on its prototype by the explorer (a GraphQL resolver, a request-scoped provider). */
export function isWrappedProviderMethod(method: unknown): boolean {
  return (
    typeof method === 'function' &&
    (method as { [PROVIDER_WRAPPED]?: unknown })[PROVIDER_WRAPPED] !== undefined
  );
}
