import 'reflect-metadata';
import { join } from 'node:path';
import { ClientProxyFactory, Transport } from '@nestjs/microservices';
import * as internals from './nest-internals';

/**
 * Runs on each major of the test matrix (jest.config.js: NestJS 11, jest.nest12.config.js: NestJS 12): every key
 * nest-internals.ts spells out for an optional package is that package's own constant, and the deep imports it
 * re-exports exist. A Nest release that moves one fails here.
 */
describe('the NestJS internals Ballast reads', () => {
  it.each([
    ['@nestjs/microservices/constants', 'PATTERN_HANDLER_METADATA'],
    ['@nestjs/websockets/constants', 'MESSAGE_MAPPING_METADATA'],
    ['@nestjs/websockets/constants', 'GATEWAY_METADATA'],
    ['@nestjs/graphql/dist/graphql.constants.js', 'RESOLVER_TYPE_METADATA'],
    ['@nestjs/graphql/dist/graphql.constants.js', 'RESOLVER_PROPERTY_METADATA'],
    ['@nestjs/graphql/dist/graphql.constants.js', 'RESOLVER_REFERENCE_METADATA'],
  ] as const)('%s %s is the key nest-internals.ts spells out', (module, name) => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the module a name is read from varies per case
    const constants = require(module) as Record<string, unknown>;
    expect(constants[name]).toBe(internals[name]);
  });

  it.each([
    'CUSTOM_ROUTE_ARGS_METADATA',
    'EXCEPTION_FILTERS_METADATA',
    'FILTER_CATCH_EXCEPTIONS',
    'INTERCEPTORS_METADATA',
    'METHOD_METADATA',
    'PATH_METADATA',
    'ROUTE_ARGS_METADATA',
    'SSE_METADATA',
  ] as const)('@nestjs/common/constants still has %s', (name) => {
    expect(typeof internals[name]).toBe('string');
    expect(internals[name]).not.toBe('');
  });

  it('@nestjs/common still numbers the REQUEST route parameter and the custom ones as Ballast expects', () => {
    expect(internals.RouteParamtypes.REQUEST).toBe(0);
    expect(typeof internals.RouteParamtypes.BODY).toBe('number');
  });

  it('@nestjs/microservices ClientGrpcProxy still has the shape Ballast recognises (options, clients, service lookups)', () => {
    const options = {
      package: 'budget',
      protoPath: join(__dirname, '__tests__', 'budget.proto'),
    };
    const proxy = ClientProxyFactory.create({ transport: Transport.GRPC, options });
    expect(internals.grpcClientProxyOf(proxy)).toBe(proxy);
    expect(internals.grpcClientProxyOf(proxy)!.options).toBe(options);
    expect(internals.grpcClientProxyOf({ getService: () => undefined })).toBeUndefined();
  });
});
