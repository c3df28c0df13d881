import { Reflector } from '@nestjs/core';
import { AMBIENT_SIGNAL, type RunOptions } from '@ballast/core';

/** Options shared by `@Resilient` and `@Hedged`. */
export interface ResilientOptions {
  /**
   * Partitions the policy's per-key state (breaker, bucket, limits). Without it the state is policy-wide, so
   * every handler using the policy shares one breaker — right when they call the same dependency.
   */
  readonly route?: string | undefined;
}

/** What `@Resilient` / `@Hedged` record: one metadata object, so the method's binding wins over the class's as a whole. */
export interface ResilienceBinding {
  readonly policy: string;
  readonly route: string | undefined;
  /** True only for `@Hedged`: hedging re-runs the work, which is safe only for idempotent reads. */
  readonly hedge: boolean;
}

/** Typed metadata (Reflector.createDecorator), read with `reflector.getAllAndOverride(ResilienceBindingMetadata, …)`. */
export const ResilienceBindingMetadata = Reflector.createDecorator<ResilienceBinding>({
  key: 'ballast:resilient',
});

/**
 * The `run` options of a bound call — the one place the three ways a decorated method runs (the interceptor, the
 * wrapped HTTP handler, the wrapped provider method) turn a binding into a call; `signal` is the call's own (the
 * client's disconnect, an RPC consumer leaving), when it has one.
 */
export function runOptionsOf(
  binding: ResilienceBinding,
  signal?: AbortSignal,
): RunOptions<unknown> & { readonly [AMBIENT_SIGNAL]: true } {
  // A decorated method gets its signal from currentSignal() only (it receives nothing new, SPEC §9): its call runs
  // in a context frame of its own even when nothing could abort it, where core would leave it in its caller's.
  return signal === undefined
    ? { policy: binding.policy, route: binding.route, hedge: binding.hedge, [AMBIENT_SIGNAL]: true }
    : { policy: binding.policy, route: binding.route, hedge: binding.hedge, signal, [AMBIENT_SIGNAL]: true };
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
