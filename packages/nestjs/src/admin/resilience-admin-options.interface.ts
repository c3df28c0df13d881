import type { Duration } from '@ballast/core';
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
  /**
   * Serve the live dashboard (SPEC §14.2): the page at `GET /{path}/ui` (its shell and assets load without
   * credentials), its data at `GET /{path}/stream` and `GET /{path}/specs/:policy`, behind `guard`.
   */
  readonly dashboard?: boolean | undefined;
  /**
   * Who an action is audited as (SPEC §14.1), from the request the guard let through. Default: the guard's
   * principal, `request.user.id` or `request.user.sub`. Return an identifier, never a credential.
   */
  readonly actor?: ((request: unknown) => string | undefined) | undefined;
  /** How often the stream sends a `snapshot` (default `'1s'`; from 100 ms to 60 s). */
  readonly dashboardInterval?: Duration | undefined;
}
