import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import { retry, type Observable } from 'rxjs';

/*
 * A user's own retrying interceptor (nest #11923): it retries by re-subscribing
 * `next.handle()`, so each re-subscription must be a new call under Ballast's policy.
 */

/** Retries the handler once. */
@Injectable()
export class RetryOnce implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(retry(1));
  }
}

/** Retries the handler twice. */
@Injectable()
export class RetryTwice implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(retry(2));
  }
}
