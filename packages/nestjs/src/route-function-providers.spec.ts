import 'reflect-metadata';
import {
  Controller,
  Injectable,
  Logger,
  type ExecutionContext,
  type INestMicroservice,
} from '@nestjs/common';
import { ClientProxyFactory, MessagePattern, Transport, type ClientProxy } from '@nestjs/microservices';
import { Test, type TestingModule } from '@nestjs/testing';
import {
  CircuitBreakerStrategy,
  RateLimitStrategy,
  Resilience,
  ResilienceError,
  ResiliencePolicy,
  type ResilienceEvent,
} from '@ballast/core';
import { FakeClock } from '@ballast/testing';
// A value import: `design:returntype` must see the Observable class for the method to be wrapped lazily.
import { Observable, defer, lastValueFrom, of, toArray } from 'rxjs';
import { freePort } from './__tests__/harness';
import { Resilient, ResilienceModule, type ResilientCall } from './index';

function policies(): ResiliencePolicy[] {
  return [
    new ResiliencePolicy({
      name: 'accounts',
      strategies: [
        new CircuitBreakerStrategy({
          failureRatio: 0.5,
          samplingWindow: '10s',
          minThroughput: 2,
          breakDuration: '5s',
        }),
      ],
    }),
    new ResiliencePolicy({ name: 'per-sku', strategies: [new RateLimitStrategy({ permits: 1, per: '1h' })] }),
  ];
}

/** A payment client: each account has a breaker of its own, keyed by the method's first argument. */
const chargeCalls: ResilientCall[] = [];

@Injectable()
class AccountsClient {
  readonly runs: string[] = [];
  readonly failing = new Set<string>();

  @Resilient('accounts', {
    route: (call) => {
      chargeCalls.push(call);
      return call.args[0] as string;
    },
  })
  async charge(account: string, cents: number): Promise<string> {
    this.runs.push(account);
    if (this.failing.has(account)) throw Object.assign(new Error('gateway reset'), { code: 'ECONNRESET' });
    return `charged ${account} ${cents}`;
  }

  @Resilient('per-sku', { route: ({ args: [sku] }) => sku as string })
  prices(sku: string): Observable<number> {
    return defer(() => {
      this.runs.push(`prices ${sku}`);
      return of(1, 2);
    });
  }

  @Resilient('accounts', { route: (call) => `feed-${String(call.args[0])}` })
  async *feed(account: string): AsyncGenerator<string> {
    this.runs.push(`feed ${account}`);
    yield account;
  }

  @Resilient('accounts', {
    route: (call) => (call.args[0] === 'bad' ? (7 as unknown as string) : undefined),
  })
  async refund(account: string): Promise<string> {
    this.runs.push(`refund ${account}`);
    return `refunded ${account}`;
  }

  @Resilient('accounts', {
    route: () => {
      throw new TypeError('accounts table missing');
    },
  })
  statement(): Observable<string> {
    return defer(() => {
      this.runs.push('statement');
      return of('statement');
    });
  }
}

describe('@Resilient with a route function on provider methods', () => {
  let moduleRef: TestingModule;
  let client: AccountsClient;
  let resilience: Resilience;
  let events: ResilienceEvent[];

  beforeEach(async () => {
    moduleRef = await Test.createTestingModule({
      imports: [ResilienceModule.forRoot({ policies: policies(), clock: new FakeClock() })],
      providers: [AccountsClient],
    }).compile();
    await moduleRef.init();
    client = moduleRef.get(AccountsClient);
    resilience = moduleRef.get(Resilience);
    events = [];
    resilience.on((e) => events.push(e));
  });
  afterEach(async () => {
    await moduleRef.close();
  });

  const routes = async (policy: string) =>
    (await resilience.admin.inspect({ policy })).map((s) => s.route ?? null).sort();

  it("keys the breaker by the first argument: one account's open circuit does not refuse another", async () => {
    client.failing.add('acct-1');
    await expect(client.charge('acct-1', 100)).rejects.toThrow('gateway reset');
    await expect(client.charge('acct-1', 100)).rejects.toThrow('gateway reset');
    await expect(client.charge('acct-1', 100)).rejects.toMatchObject({
      code: 'circuit_open',
      route: 'acct-1',
    });
    await expect(client.charge('acct-2', 250)).resolves.toBe('charged acct-2 250');
    expect(client.runs).toEqual(['acct-1', 'acct-1', 'acct-2']);
    const state = await resilience.admin.inspect({ policy: 'accounts' });
    expect(state.map((s) => [s.route, s.breaker?.state]).sort()).toEqual([
      ['acct-1', 'open'],
      ['acct-2', 'closed'],
    ]);
  });

  it("asks about the method's arguments only: a provider call has no request and no context", async () => {
    await client.charge('acct-3', 5);
    expect(chargeCalls.at(-1)).toEqual({ args: ['acct-3', 5] });
  });

  it('keys Observable and async-generator methods too', async () => {
    await expect(lastValueFrom(client.prices('sku-1').pipe(toArray()))).resolves.toEqual([1, 2]);
    await expect(lastValueFrom(client.prices('sku-1'))).rejects.toMatchObject({ code: 'rate_limited' });
    await expect(lastValueFrom(client.prices('sku-2'))).resolves.toBe(2);
    expect(await routes('per-sku')).toEqual(['sku-1', 'sku-2']);
    const fed: string[] = [];
    for await (const value of client.feed('acct-9')) fed.push(value);
    expect(fed).toEqual(['acct-9']);
    expect(await routes('accounts')).toEqual(['feed-acct-9']);
  });

  it('undefined is the policy-wide key', async () => {
    await expect(client.refund('acct-4')).resolves.toBe('refunded acct-4');
    expect(await routes('accounts')).toEqual([null]);
  });

  it('refuses a call whose route function answers a non-string: a rejection naming it, no run, no key', async () => {
    const error: unknown = await client.refund('bad').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResilienceError);
    expect(error).toMatchObject({
      kind: 'internal',
      code: 'callback_failed',
      policy: 'accounts',
      message:
        "@Resilient('accounts') on AccountsClient.refund: options.route answered 7; expected a string or undefined",
    });
    expect(client.runs).toEqual([]);
    expect(await resilience.admin.inspect({ policy: 'accounts' })).toEqual([]);
    expect(events).toEqual([]);
  });

  it('refuses a call whose route function throws, with the thrown error as the cause', async () => {
    const error: unknown = await lastValueFrom(client.statement()).catch((e: unknown) => e);
    expect(error).toMatchObject({
      kind: 'internal',
      code: 'callback_failed',
      message:
        "@Resilient('accounts') on AccountsClient.statement: options.route threw TypeError: accounts table missing",
      cause: expect.objectContaining({ message: 'accounts table missing' }),
    });
    expect(client.runs).toEqual([]);
    expect(await resilience.admin.inspect({ policy: 'accounts' })).toEqual([]);
  });
});

@Controller()
class StockHandlers {
  runs = 0;

  @MessagePattern('stock')
  @Resilient('per-sku', {
    route: (call) => {
      stockCalls.push(call);
      return (call.args[0] as { sku: string }).sku;
    },
  })
  stock(data: { sku: string }): string {
    this.runs++;
    return `in stock: ${data.sku}`;
  }

  @MessagePattern('broken')
  @Resilient('per-sku', { route: () => 0 as unknown as string })
  broken(): string {
    this.runs++;
    return 'never';
  }
}
const stockCalls: ResilientCall[] = [];

/** A real Nest microservice on the TCP transport: its handlers run through the interceptor, which has the context. */
describe('@Resilient with a route function on microservice handlers, over TCP', () => {
  let service: INestMicroservice;
  let proxy: ClientProxy;

  beforeAll(async () => {
    const port = await freePort();
    const moduleRef = await Test.createTestingModule({
      imports: [ResilienceModule.forRoot({ policies: policies(), clock: new FakeClock() })],
      controllers: [StockHandlers],
    }).compile();
    service = moduleRef.createNestMicroservice({
      transport: Transport.TCP,
      options: { host: '127.0.0.1', port },
      logger: false,
    });
    await service.listen();
    proxy = ClientProxyFactory.create({ transport: Transport.TCP, options: { host: '127.0.0.1', port } });
    await proxy.connect();
  });
  afterAll(async () => {
    await proxy?.close();
    await service?.close();
  });

  it("gets Nest's arguments and ExecutionContext, and keys the state by the payload", async () => {
    await expect(lastValueFrom(proxy.send('stock', { sku: 'a' }))).resolves.toBe('in stock: a');
    const error: unknown = await lastValueFrom(proxy.send('stock', { sku: 'a' })).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'rate_limited' });
    await expect(lastValueFrom(proxy.send('stock', { sku: 'b' }))).resolves.toBe('in stock: b');
    const [call] = stockCalls as [ResilientCall];
    const context = call.context as ExecutionContext;
    expect(context.getType()).toBe('rpc');
    expect(context.getHandler().name).toBe('stock');
    expect(call.args).toEqual(context.getArgs());
    expect(context.switchToRpc().getData()).toEqual({ sku: 'a' });
    expect(call.request).toBeUndefined();
    const state = await service.get(Resilience).admin.inspect({ policy: 'per-sku' });
    expect(state.map((s) => s.route).sort()).toEqual(['a', 'b']);
  });

  it('answers a failed route function with an RPC error, without running the handler', async () => {
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    try {
      const handlers = service.get(StockHandlers);
      const before = handlers.runs;
      const error: unknown = await lastValueFrom(proxy.send('broken', {})).catch((e: unknown) => e);
      expect(error).toEqual({ status: 'error', message: 'Internal server error' });
      expect(handlers.runs).toBe(before);
      expect(logged.mock.calls[0]![0]).toMatchObject({
        code: 'callback_failed',
        message:
          "@Resilient('per-sku') on StockHandlers.broken: options.route answered 0; expected a string or undefined",
      });
    } finally {
      logged.mockRestore();
    }
  });
});
