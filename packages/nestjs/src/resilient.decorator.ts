import { createParamDecorator } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { currentSignal } from '@ballast/core';

/** Options shared by {@link Resilient} and {@link Hedged}. */
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
 * Runs a controller handler (on a method or a whole controller class; the method's decorator wins) or a provider
 * method inside `resilience.run` under `policy`. The policy's hedge is skipped: use {@link Hedged} for reads.
 *
 * @publicApi
 */
export function Resilient(policy: string, options: ResilientOptions = {}): MethodDecorator & ClassDecorator {
  return ResilienceBindingMetadata({ policy, route: options.route, hedge: false });
}

/**
 * Like {@link Resilient} but lets the policy's hedge fire: a slow attempt gets raced by another one. Use it only
 * for idempotent work (GETs, reads), since the handler may run more than once concurrently.
 *
 * @publicApi
 */
export function Hedged(policy: string, options: ResilientOptions = {}): MethodDecorator & ClassDecorator {
  return ResilienceBindingMetadata({ policy, route: options.route, hedge: true });
}

/**
 * The signal of the running call (aborted on attempt timeout, deadline, a lost hedge race or client disconnect),
 * injected as a handler parameter. Same as calling `currentSignal()` from `@ballast/core` in the handler; undefined
 * outside a `@Resilient` handler.
 *
 * @publicApi
 */
export const CallSignal = createParamDecorator((_data: unknown): AbortSignal | undefined => currentSignal());
