import { Reflector } from '@nestjs/core';

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
