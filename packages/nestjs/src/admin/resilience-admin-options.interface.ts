import type { CanActivate, DynamicModule, ForwardReference, Type } from '@nestjs/common';

/** Options of `ResilienceAdminModule.forRoot`. */
export interface ResilienceAdminOptions {
  /** Route prefix of the five endpoints (default `resilience`, i.e. `/resilience/state`, …). */
  readonly path?: string | undefined;
  /**
   * A `CanActivate` class protecting every endpoint (the control plane can disable traffic). Resolved by Nest in
   * the admin module, so its dependencies must be global or listed in `imports`.
   */
  readonly guard?: Type<CanActivate> | undefined;
  /** Modules the guard's dependencies come from. */
  readonly imports?:
    ReadonlyArray<Type<unknown> | DynamicModule | Promise<DynamicModule> | ForwardReference> | undefined;
  /** Serve the endpoints without any guard. Only for local development; the name says what it is. */
  readonly unsafeAllowAnonymous?: boolean | undefined;
}
