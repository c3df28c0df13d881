import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import type { HttpAdapterHost } from '@nestjs/core';
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
