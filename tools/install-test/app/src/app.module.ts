import { Injectable, Module, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { CircuitBreakerStrategy, RateLimitStrategy, ResiliencePolicy, RetryStrategy } from '@ballast/core';
import { ResilienceAdminModule, ResilienceModule } from '@ballast/nestjs';
import { AppController } from './app.controller.js';
import { QuotesService } from './quotes.service.js';

/** The admin API needs a guard: a bearer token from the environment. */
@Injectable()
export class AdminGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>();
    return request.headers.authorization === `Bearer ${process.env.ADMIN_TOKEN ?? ''}`;
  }
}

@Module({
  imports: [
    ResilienceModule.forRoot({
      policies: [
        new ResiliencePolicy({
          name: 'limited',
          strategies: [new RateLimitStrategy({ permits: 2, per: '1h' })],
        }),
        new ResiliencePolicy({
          name: 'retrying',
          strategies: [new RetryStrategy({ maxAttempts: 3, backoff: { base: 1, max: 5 } })],
        }),
        new ResiliencePolicy({
          name: 'guarded',
          strategies: [
            new CircuitBreakerStrategy({
              failureRatio: 0.5,
              samplingWindow: '30s',
              minThroughput: 10,
              breakDuration: '30s',
            }),
          ],
        }),
      ],
    }),
    ResilienceAdminModule.forRoot({ guard: AdminGuard }),
  ],
  controllers: [AppController],
  providers: [QuotesService, AdminGuard],
})
export class AppModule {}
