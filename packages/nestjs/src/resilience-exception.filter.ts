import { Catch, Logger, Optional, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { FILTER_CATCH_EXCEPTIONS } from './nest-internals';
import { ApplicationConfig, BaseExceptionFilter, HttpAdapterHost } from '@nestjs/core';
import { ResilienceError } from '@ballast/core';
import { throwError, type Observable } from 'rxjs';
import { ClientClosedRequestError, isResponseGone } from './client-disconnect';
import { mapResilienceError, type MappedResilienceError } from './http-error-mapping';
import { GrpcDeadlineExceededError, grpcCall, grpcStatusError } from './grpc-call';

/** nginx's "Client Closed Request": nobody reads it, but access logs then tell aborts from failures. */
const CLIENT_CLOSED_REQUEST = 499;

/** The exception types a filter declared with `@Catch(...)` (none: it catches everything), read as Nest does. */
function catches(filter: ExceptionFilter, exception: unknown): boolean {
  const types = (Reflect.getMetadata(FILTER_CATCH_EXCEPTIONS, Object.getPrototypeOf(filter) as object) ??
    Reflect.getMetadata(FILTER_CATCH_EXCEPTIONS, filter.constructor) ??
    []) as unknown[];
  return (
    types.length === 0 ||
    types.some((type) => typeof type === 'function' && exception instanceof (type as new () => object))
  );
}

/**
 * What a GraphQL resolver's rejection resolves to: an `Error` (graphql-js throws a resolver's returned Error as a
 * field error, and copies its `extensions`) with the generic message, the Ballast `code` in `extensions` — where
 * GraphQL clients look for a machine-readable code — and `retryAfter` in whole seconds when the wait is known, the
 * `Retry-After` header a field error cannot set. Nothing else: no policy, route or details, and a stack without
 * frames, so servers that show stack traces in development do not print Ballast's internals to the client.
 */
function graphqlError(mapped: MappedResilienceError): Error {
  const { code, message } = mapped.body;
  const error = new Error(message);
  error.stack = `Error: ${message}`;
  const extensions: Record<string, unknown> = { code };
  if (mapped.retryAfterSeconds !== undefined) extensions.retryAfter = mapped.retryAfterSeconds;
  return Object.assign(error, { extensions });
}

/**
 * Maps Ballast's own rejections to HTTP answers (429 / 503 / 504, see `mapResilienceError`). Registered globally
 * by `ResilienceModule` through `APP_FILTER`, so a rejection raised in a decorated provider deep inside a handler
 * maps the same way as one raised by the interceptor. It is bound to `ResilienceError` (and the client-disconnect
 * reason) only, so Nest never hands it anything else — an `HttpException`, a 404 — and those keep Nest's normal
 * handling untouched.
 *
 * Nest runs one filter per exception: the last registered global filter that matches (method and controller
 * filters come first). A `ResilienceError` this filter does not map — a misconfiguration, one a user threw — is
 * therefore passed on to the filter Nest would have chosen without it: the next global filter registered before
 * it that catches the error (typically the application's own catch-all), else Nest's default handling. A
 * catch-all registered after it (`app.useGlobalFilters(...)` runs after every `APP_FILTER`) sees Ballast's
 * rejections itself; it gets the mapping by handing them to this filter or by calling `mapResilienceError`.
 *
 * @publicApi
 */
@Catch(ResilienceError, ClientClosedRequestError, GrpcDeadlineExceededError)
export class ResilienceExceptionFilter implements ExceptionFilter {
  private static readonly logger = new Logger('ExceptionsHandler');

  /**
   * @param config The application's config, whose global filters are where an unmapped error is passed on to.
   *   Nest injects it; a filter constructed by hand without it passes unmapped errors to Nest's default handling.
   */
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    @Optional() private readonly config?: ApplicationConfig,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): unknown {
    // A gRPC call that arrived with its deadline passed: grpc-js answers DEADLINE_EXCEEDED from the error's code.
    if (exception instanceof GrpcDeadlineExceededError) return throwError(() => exception);
    const mapped = mapResilienceError(exception);
    if (mapped === undefined && !(exception instanceof ClientClosedRequestError))
      return this.passOn(exception, host);
    const type = host.getType<string>();
    if (type === 'http') return this.replyHttp(exception, mapped, host);
    const body = mapped?.body ?? { message: 'Internal server error' };
    // gRPC has status codes of its own: a rejection fails the call with one (grpc-js would say UNKNOWN otherwise).
    if (type === 'rpc' && mapped !== undefined && grpcCall(host) !== undefined)
      return throwError(() => grpcStatusError(mapped)) satisfies Observable<never>;
    if (type === 'rpc') return throwError(() => ({ status: 'error', ...body })) satisfies Observable<never>;
    if (type === 'ws') {
      const client = host.switchToWs().getClient<{ emit?: (event: string, data: unknown) => unknown }>();
      client.emit?.('exception', { status: 'error', ...body });
      return undefined;
    }
    if (type === 'graphql' && mapped !== undefined) return graphqlError(mapped);
    return exception; // other transports turn a returned error into their own error shape
  }

  /**
   * Not a rejection of this request: what would have happened had this filter not been registered. The filters
   * registered after this one did not match (Nest would have picked them), so the candidates are those before it.
   */
  private passOn(exception: unknown, host: ArgumentsHost): unknown {
    const next = this.nextFilter(exception);
    if (next !== undefined) return next.catch(exception, host);
    const type = host.getType<string>();
    if (type === 'http') {
      new BaseExceptionFilter(this.adapterHost.httpAdapter).catch(exception, host);
      return undefined;
    }
    if (type !== 'rpc' && type !== 'ws') return exception;
    // What Nest's BaseRpcExceptionFilter / BaseWsExceptionFilter do with an unknown error (neither is importable
    // here: @nestjs/microservices and @nestjs/websockets are not dependencies).
    ResilienceExceptionFilter.logger.error(exception);
    const body = { status: 'error', message: 'Internal server error' };
    if (type === 'rpc') return throwError(() => body) satisfies Observable<never>;
    host
      .switchToWs()
      .getClient<{ emit?: (event: string, data: unknown) => unknown }>()
      .emit?.('exception', body);
    return undefined;
  }

  /**
   * The global filter registered before this one that catches `exception`, skipping other Ballast filters (they
   * would pass it on the same way). None when this instance is not a global filter of this application (e.g. a
   * catch-all calls it itself): starting from the top then could hand the error back to that catch-all.
   */
  private nextFilter(exception: unknown): ExceptionFilter | undefined {
    const filters = this.config?.getGlobalFilters();
    if (filters === undefined) return undefined;
    for (let i = filters.indexOf(this) - 1; i >= 0; i--) {
      const filter = filters[i]!;
      if (filter instanceof ResilienceExceptionFilter) continue;
      if (catches(filter, exception)) return filter;
    }
    return undefined;
  }

  private replyHttp(
    exception: unknown,
    mapped: MappedResilienceError | undefined,
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
    if (mapped!.retryAfterSeconds !== undefined)
      adapter.setHeader(response, 'Retry-After', String(mapped!.retryAfterSeconds));
    adapter.reply(response, mapped!.body, mapped!.status);
  }
}
