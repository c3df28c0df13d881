import { Controller, Module, UseGuards, type DynamicModule } from '@nestjs/common';
import { ResilienceError, formatValue } from '@ballast/core';
import { ResilienceAdminController } from './resilience-admin.controller';
import type { ResilienceAdminOptions } from './resilience-admin-options.interface';
import { checkDashboardOptions, dashboardIntervalMs } from './dashboard/dashboard-options';
import { dashboardControllers } from './dashboard/dashboard.controllers';
import { boundedActor, defaultActor } from './admin-actor';

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
    checkOptions(options);
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
    class ResilienceAdminRoutes extends ResilienceAdminController {
      static override actorOf = options.actor === undefined ? defaultActor : boundedActor(options.actor);
    }
    Controller(path)(ResilienceAdminRoutes);
    if (guard !== undefined) UseGuards(guard)(ResilienceAdminRoutes);
    return {
      module: ResilienceAdminModule,
      imports: [...(options.imports ?? [])],
      controllers: [
        ResilienceAdminRoutes,
        ...(options.dashboard === true
          ? dashboardControllers(path, guard, dashboardIntervalMs(options.dashboardInterval)!)
          : []),
      ],
    };
  }
}

/**
 * The shape of the options, every violation in one error (as core reports its own): a path Nest would silently
 * mangle (`''` serves the endpoints at the application's root, `'a?b'` can never match) or a guard that is not a
 * class would otherwise surface later, far from the cause, or not at all.
 */
function checkOptions(options: unknown): void {
  const o = (typeof options === 'object' && options !== null ? options : {}) as Record<string, unknown>;
  const problems: string[] = [];
  const fail = (field: string, constraint: string): void => {
    problems.push(`${field} must be ${constraint}, got ${formatValue(o[field])}`);
  };
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    problems.push(`options must be an object, got ${formatValue(options)}`);
  const path = o['path'];
  if (
    path !== undefined &&
    (typeof path !== 'string' || !/^\/*[A-Za-z0-9._~-]+(\/[A-Za-z0-9._~-]+)*\/*$/.test(path))
  )
    fail(
      'path',
      "a URL path prefix of non-empty segments of letters, digits and . _ ~ - (like 'ops/resilience')",
    );
  if (o['guard'] !== undefined && typeof o['guard'] !== 'function') fail('guard', 'a CanActivate class');
  if (o['unsafeAllowAnonymous'] !== undefined && typeof o['unsafeAllowAnonymous'] !== 'boolean')
    fail('unsafeAllowAnonymous', 'a boolean');
  if (o['imports'] !== undefined && !Array.isArray(o['imports'])) fail('imports', 'an array of modules');
  if (o['actor'] !== undefined && typeof o['actor'] !== 'function')
    fail('actor', 'a function (request) => string | undefined');
  checkDashboardOptions(o, fail);
  if (problems.length > 0)
    throw new ResilienceError({
      kind: 'configuration',
      message: `Invalid ResilienceAdminModule.forRoot options: ${problems.join('; ')}`,
    });
}
