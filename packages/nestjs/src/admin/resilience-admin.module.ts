import { Controller, Module, UseGuards, type DynamicModule } from '@nestjs/common';
import { ResilienceError } from '@ballast/core';
import { ResilienceAdminController } from './resilience-admin.controller';
import type { ResilienceAdminOptions } from './resilience-admin-options.interface';

/**
 * The opt-in HTTP control plane: `GET /{path}/state`, force-open / clear / reset / retune per policy. It can switch
 * traffic off, so it is guarded by default: without a `guard` and without `unsafeAllowAnonymous: true`, `forRoot`
 * throws while the application module is being defined — the app never starts with an open admin API.
 * Needs `ResilienceModule` (global) for the `Resilience` it controls.
 *
 * @publicApi
 */
@Module({})
export class ResilienceAdminModule {
  static forRoot(options: ResilienceAdminOptions = {}): DynamicModule {
    const { path = 'resilience', guard, unsafeAllowAnonymous = false } = options;
    if (guard === undefined && unsafeAllowAnonymous !== true) {
      throw new ResilienceError({
        kind: 'configuration',
        message:
          'ResilienceAdminModule.forRoot: refusing to expose the resilience admin API without a guard — it can ' +
          'force policies open and retune them. Pass { guard: YourAuthGuard } (a CanActivate class), or ' +
          '{ unsafeAllowAnonymous: true } for local development only.',
      });
    }
    // A subclass per registration carries the configured path and guard; routes and DI come from the base class.
    class ResilienceAdminRoutes extends ResilienceAdminController {}
    Controller(path)(ResilienceAdminRoutes);
    if (guard !== undefined) UseGuards(guard)(ResilienceAdminRoutes);
    return {
      module: ResilienceAdminModule,
      imports: [...(options.imports ?? [])],
      controllers: [ResilienceAdminRoutes],
    };
  }
}
