import { Catch, HttpStatus, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { ResilienceError } from '@ballast/core';
import { throwError, type Observable } from 'rxjs';
import { ClientClosedRequestError, isResponseGone } from './client-disconnect';
import { mapResilienceError } from './http-error-mapping';

/** nginx's "Client Closed Request": nobody reads it, but access logs then tell aborts from failures. */
const CLIENT_CLOSED_REQUEST = 499;

/**
 * Maps Ballast's own rejections to HTTP answers (429 / 503 / 504, see `mapResilienceError`). Registered globally
 * by `ResilienceModule` through `APP_FILTER`, so a rejection raised in a decorated provider deep inside a handler
 * maps the same way as one raised by the interceptor. It catches only `ResilienceError` (and the client-disconnect
 * reason), so every other error — an `HttpException`, a 404 — keeps Nest's normal handling untouched.
 *
 * @publicApi
 */
@Catch(ResilienceError, ClientClosedRequestError)
export class ResilienceExceptionFilter implements ExceptionFilter {
  private static readonly logger = new Logger('ExceptionsHandler');

  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(exception: unknown, host: ArgumentsHost): unknown {
    const mapped = mapResilienceError(exception);
    const type = host.getType<string>();
    if (type === 'http') return this.replyHttp(exception, mapped, host);
    if (mapped === undefined && !(exception instanceof ClientClosedRequestError))
      ResilienceExceptionFilter.logger.error(exception);
    const body = mapped?.body ?? { message: 'Internal server error' };
    if (type === 'rpc') return throwError(() => ({ status: 'error', ...body })) satisfies Observable<never>;
    if (type === 'ws') {
      const client = host.switchToWs().getClient<{ emit?: (event: string, data: unknown) => unknown }>();
      client.emit?.('exception', { status: 'error', ...body });
      return undefined;
    }
    return exception; // other transports (e.g. GraphQL) turn a returned error into their own error shape
  }

  private replyHttp(
    exception: unknown,
    mapped: ReturnType<typeof mapResilienceError>,
    host: ArgumentsHost,
  ): void {
    const adapter = this.adapterHost.httpAdapter;
    const response: unknown = host.switchToHttp().getResponse();
    if (exception instanceof ClientClosedRequestError) {
      if (!isResponseGone(response) && !adapter.isHeadersSent(response))
        adapter.reply(
          response,
          { statusCode: CLIENT_CLOSED_REQUEST, message: exception.message },
          CLIENT_CLOSED_REQUEST,
        );
      return;
    }
    if (adapter.isHeadersSent(response)) {
      adapter.end(response);
      return;
    }
    if (mapped === undefined) {
      // Not a rejection of this request (a misconfiguration, a ResilienceError thrown by user code): exactly what
      // Nest's default handler would do with an unknown error.
      ResilienceExceptionFilter.logger.error(exception);
      const status = HttpStatus.INTERNAL_SERVER_ERROR;
      adapter.reply(response, { statusCode: status, message: 'Internal server error' }, status);
      return;
    }
    if (mapped.retryAfterSeconds !== undefined)
      adapter.setHeader(response, 'Retry-After', String(mapped.retryAfterSeconds));
    adapter.reply(response, mapped.body, mapped.status);
  }
}
