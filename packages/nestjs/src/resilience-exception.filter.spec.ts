import 'reflect-metadata';
import { Catch, Logger, type ExceptionFilter } from '@nestjs/common';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import { ApplicationConfig, type HttpAdapterHost } from '@nestjs/core';
import { ErrorCode, ResilienceError } from '@ballast/core';
import { lastValueFrom, type Observable } from 'rxjs';
import { ResilienceExceptionFilter } from './resilience-exception.filter';

const adapterHost = { httpAdapter: undefined } as unknown as HttpAdapterHost;
const circuitOpen = new ResilienceError({
  kind: 'infrastructure',
  code: ErrorCode.CIRCUIT_OPEN,
  policy: 'payments',
});

function host(type: 'rpc' | 'ws', client: unknown = {}): ExecutionContextHost {
  const h = new ExecutionContextHost([client, {}]);
  h.setType(type);
  return h;
}

describe('ResilienceExceptionFilter outside HTTP', () => {
  const filter = new ResilienceExceptionFilter(adapterHost);

  it('turns a mapped rejection into an RPC error carrying the same body', async () => {
    const result = filter.catch(circuitOpen, host('rpc')) as Observable<never>;
    await expect(lastValueFrom(result)).rejects.toEqual({
      status: 'error',
      statusCode: 503,
      error: 'Service Unavailable',
      code: 'circuit_open',
      message: expect.not.stringContaining('payments'),
    });
  });

  it('emits a WS "exception" event with the mapped body', () => {
    const emitted: unknown[] = [];
    filter.catch(
      circuitOpen,
      host('ws', { emit: (event: string, data: unknown) => emitted.push([event, data]) }),
    );
    expect(emitted).toEqual([
      ['exception', expect.objectContaining({ status: 'error', code: 'circuit_open' })],
    ]);
  });

  it('never leaks the message of an unmapped error to an RPC caller', async () => {
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => {});
    const misconfigured = new ResilienceError({ kind: 'configuration', message: "Unknown policy 'secret'" });
    const result = filter.catch(misconfigured, host('rpc')) as Observable<never>;
    await expect(lastValueFrom(result)).rejects.toEqual({
      status: 'error',
      message: 'Internal server error',
    });
    expect(logged).toHaveBeenCalledWith(misconfigured); // the operator still sees it
    logged.mockRestore();
  });
});

describe('ResilienceExceptionFilter passing on what it does not map', () => {
  const misconfigured = new ResilienceError({ kind: 'configuration', message: "Unknown policy 'secret'" });

  @Catch()
  class CatchAll implements ExceptionFilter {
    readonly seen: unknown[] = [];
    catch(exception: unknown): string {
      this.seen.push(exception);
      return 'handled by the catch-all';
    }
  }

  class Unrelated extends Error {}
  @Catch(Unrelated)
  class UnrelatedFilter implements ExceptionFilter {
    catch(): string {
      return 'wrong filter';
    }
  }

  function globalFilters(...filters: ExceptionFilter[]): ApplicationConfig {
    const config = new ApplicationConfig();
    for (const f of filters) config.addGlobalFilter(f);
    return config;
  }

  it('hands it to the next matching global filter registered before it, skipping other Ballast filters', () => {
    const catchAll = new CatchAll();
    const config = new ApplicationConfig();
    const filter = new ResilienceExceptionFilter(adapterHost, config);
    config.useGlobalFilters(
      catchAll,
      new UnrelatedFilter(),
      new ResilienceExceptionFilter(adapterHost, config),
      filter,
    );
    expect(filter.catch(misconfigured, host('rpc'))).toBe('handled by the catch-all');
    expect(catchAll.seen).toEqual([misconfigured]);
  });

  it('still maps its own rejections itself', async () => {
    const catchAll = new CatchAll();
    const config = new ApplicationConfig();
    const filter = new ResilienceExceptionFilter(adapterHost, config);
    config.useGlobalFilters(catchAll, filter);
    const result = filter.catch(circuitOpen, host('rpc')) as Observable<never>;
    await expect(lastValueFrom(result)).rejects.toMatchObject({ statusCode: 503, code: 'circuit_open' });
    expect(catchAll.seen).toEqual([]);
  });

  it.each([
    [
      'registered after it (Nest would have picked it first)',
      (f: ResilienceExceptionFilter, c: CatchAll) => [f, c],
    ],
    ['not matching the error', (f: ResilienceExceptionFilter) => [new UnrelatedFilter(), f]],
  ])('falls back to the default handling when the only other filter is %s', async (_, order) => {
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => {});
    const catchAll = new CatchAll();
    const config = new ApplicationConfig();
    const filter = new ResilienceExceptionFilter(adapterHost, config);
    config.useGlobalFilters(...order(filter, catchAll));
    const result = filter.catch(misconfigured, host('rpc')) as Observable<never>;
    await expect(lastValueFrom(result)).rejects.toEqual({
      status: 'error',
      message: 'Internal server error',
    });
    expect(catchAll.seen).toEqual([]);
    logged.mockRestore();
  });

  it('never hands it back to a catch-all that called it without registering it (no loop)', async () => {
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => {});
    const catchAll = new CatchAll();
    const filter = new ResilienceExceptionFilter(adapterHost, globalFilters(catchAll));
    const result = filter.catch(misconfigured, host('rpc')) as Observable<never>;
    await expect(lastValueFrom(result)).rejects.toEqual({
      status: 'error',
      message: 'Internal server error',
    });
    expect(catchAll.seen).toEqual([]);
    logged.mockRestore();
  });

  it("emits Nest's generic WS exception for it when nothing else catches it", () => {
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => {});
    const emitted: unknown[] = [];
    new ResilienceExceptionFilter(adapterHost).catch(
      misconfigured,
      host('ws', { emit: (event: string, data: unknown) => emitted.push([event, data]) }),
    );
    expect(emitted).toEqual([['exception', { status: 'error', message: 'Internal server error' }]]);
    logged.mockRestore();
  });
});
