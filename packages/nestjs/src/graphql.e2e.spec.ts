import 'reflect-metadata';
import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable, Scope, type INestApplication } from '@nestjs/common';
import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import {
  Args,
  Field,
  GraphQLModule,
  Int,
  Mutation,
  ObjectType,
  Parent,
  Query,
  ResolveField,
  Resolver,
} from '@nestjs/graphql';
import {
  CircuitBreakerStrategy,
  ResiliencePolicy,
  RetryStrategy,
  TimeoutStrategy,
  currentSignal,
} from '@ballast/core';
import request from 'supertest';
import { ADAPTERS, bootApp, type AdapterName } from './__tests__/harness';
import { ResilienceModule, Resilient } from './index';

/** Attempts per resolver, reset before each test. */
const attempts = new Map<string, number>();
/** Counts an attempt of `name` and fails it with a retryable error while `failures` attempts have not failed. */
function attempt(name: string, failures: number): number {
  const n = (attempts.get(name) ?? 0) + 1;
  attempts.set(name, n);
  if (n <= failures) throw Object.assign(new Error(`${name} reset`), { code: 'ECONNRESET' });
  return n;
}

@ObjectType()
class Stock {
  @Field()
  sku!: string;

  @Field(() => Int)
  attempts!: number;
}

@Injectable()
class InventoryClient {
  @Resilient('retrying')
  async units(sku: string, failures: number): Promise<number> {
    return attempt(`provider:${sku}`, failures);
  }
}

@Resolver(() => Stock)
class StockResolver {
  signal: AbortSignal | undefined;

  constructor(private readonly inventory: InventoryClient) {}

  @Query(() => Stock)
  @Resilient('retrying')
  async stock(
    @Args('sku') sku: string,
    @Args('failures', { type: () => Int }) failures: number,
  ): Promise<Stock> {
    return { sku, attempts: attempt('query', failures) };
  }

  @Mutation(() => Stock)
  @Resilient('retrying')
  async reserve(
    @Args('sku') sku: string,
    @Args('failures', { type: () => Int }) failures: number,
  ): Promise<Stock> {
    return { sku, attempts: attempt('mutation', failures) };
  }

  /** A resolver without a policy of its own, calling a decorated provider. */
  @Query(() => Int)
  async units(
    @Args('sku') sku: string,
    @Args('failures', { type: () => Int }) failures: number,
  ): Promise<number> {
    return this.inventory.units(sku, failures);
  }

  @ResolveField(() => Int)
  @Resilient('retrying')
  async price(
    @Parent() stock: Stock,
    @Args('failures', { type: () => Int }) failures: number,
  ): Promise<number> {
    attempt(`field:${stock.sku}`, failures);
    return 10;
  }

  @Query(() => Int)
  @Resilient('limited')
  async quote(): Promise<number> {
    return 42;
  }

  @Query(() => Int)
  @Resilient('breaker')
  async fragile(@Args('fail') fail: boolean): Promise<number> {
    if (fail) throw Object.assign(new Error('dependency down'), { code: 'ECONNREFUSED' });
    return 1;
  }

  @Query(() => Int)
  @Resilient('timed')
  async slow(): Promise<number> {
    this.signal = currentSignal();
    await sleep(5_000, undefined, { signal: this.signal });
    return 1;
  }
}

/** Every query of the class runs under the class's policy. */
@Resolver()
@Resilient('retrying')
class CatalogResolver {
  @Query(() => Int)
  async catalog(@Args('failures', { type: () => Int }) failures: number): Promise<number> {
    return attempt('class', failures);
  }

  /** A resolver is a handler: declared synchronous, it still boots (GraphQL awaits what the policy returns). */
  @Query(() => String)
  motto(): string {
    return 'steady';
  }
}

@Resolver()
@Injectable({ scope: Scope.REQUEST })
class ScopedResolver {
  @Query(() => Int)
  @Resilient('retrying')
  async scoped(@Args('failures', { type: () => Int }) failures: number): Promise<number> {
    return attempt('scoped', failures);
  }
}

const POLICIES = [
  new ResiliencePolicy({
    name: 'retrying',
    strategies: [new RetryStrategy({ maxAttempts: 3, backoff: { base: 1, max: 1, jitter: 'none' } })],
  }),
  { name: 'limited', strategies: [{ type: 'rateLimit' as const, permits: 1, per: '1h' }] },
  new ResiliencePolicy({
    name: 'breaker',
    strategies: [
      new CircuitBreakerStrategy({
        failureRatio: 0.5,
        samplingWindow: '1m',
        minThroughput: 1,
        breakDuration: '1h',
      }),
    ],
  }),
  new ResiliencePolicy({ name: 'timed', strategies: [new TimeoutStrategy({ timeout: 50 })] }),
];

/**
 * A real Nest application with the Apollo driver on Express or Fastify (`@as-integrations/fastify`). Stack traces
 * are on (Apollo's default outside `production` and `test`), to show what a client of a development server sees.
 */
function bootGraphQL(adapter: AdapterName): Promise<INestApplication> {
  return bootApp(adapter, {
    imports: [
      ResilienceModule.forRoot({ policies: POLICIES }),
      GraphQLModule.forRoot<ApolloDriverConfig>({
        driver: ApolloDriver,
        autoSchemaFile: true,
        includeStacktraceInErrorResponses: true,
      }),
    ],
    providers: [InventoryClient, StockResolver, CatalogResolver, ScopedResolver],
  });
}

interface GqlError {
  message: string;
  path?: string[];
  extensions?: Record<string, unknown>;
}
interface GqlResponse {
  data?: Record<string, unknown> | null;
  errors?: GqlError[];
}

async function gql(app: INestApplication, query: string): Promise<GqlResponse> {
  const res = await request(app.getHttpServer() as never)
    .post('/graphql')
    .send({ query });
  expect(res.status).toBe(200);
  return res.body as GqlResponse;
}

describe.each(ADAPTERS)('@Resilient on GraphQL resolvers (Apollo driver, %s)', (adapter) => {
  let app: INestApplication;
  const query = (source: string) => gql(app, source);

  beforeAll(async () => {
    app = await bootGraphQL(adapter);
  });
  afterAll(async () => {
    await app?.close();
  });
  beforeEach(() => attempts.clear());

  /** Each way a resolver runs under a policy: the attempts counter, the query, the value it answers. */
  const kinds: [string, string, (failures: number) => string, Record<string, unknown>][] = [
    [
      'a query resolver',
      'query',
      (f) => `{ stock(sku: "q", failures: ${f}) { attempts } }`,
      { stock: { attempts: 3 } },
    ],
    [
      'a mutation resolver',
      'mutation',
      (f) => `mutation { reserve(sku: "m", failures: ${f}) { attempts } }`,
      { reserve: { attempts: 3 } },
    ],
    ['a class-level @Resilient', 'class', (f) => `{ catalog(failures: ${f}) }`, { catalog: 3 }],
    [
      'a field resolver (@ResolveField)',
      'field:f',
      (f) => `{ stock(sku: "f", failures: 0) { price(failures: ${f}) } }`,
      { stock: { price: 10 } },
    ],
    ['a request-scoped resolver', 'scoped', (f) => `{ scoped(failures: ${f}) }`, { scoped: 3 }],
    [
      'a decorated provider method called from a resolver',
      'provider:p',
      (f) => `{ units(sku: "p", failures: ${f}) }`,
      { units: 3 },
    ],
  ];

  describe.each(kinds)('%s', (_, counter, source, data) => {
    it('retries it under its policy until it succeeds', async () => {
      await expect(query(source(2))).resolves.toEqual({ data });
      expect(attempts.get(counter)).toBe(3);
    });

    it('runs the policy once per call: 3 attempts when every attempt fails, not 9', async () => {
      const body = await query(source(100));
      expect(body.errors).toHaveLength(1);
      expect(body.errors![0]!.message).toBe(`${counter} reset`);
      expect(attempts.get(counter)).toBe(3);
    });
  });

  it('answers a rate-limit rejection with a GraphQL error carrying the code, without policy, route or stack', async () => {
    await expect(query('{ quote }')).resolves.toEqual({ data: { quote: 42 } });
    const body = await query('{ quote }');
    const message = 'Too many requests; retry after the indicated delay.';
    expect(body).toEqual({
      data: null,
      errors: [
        {
          message,
          locations: [{ line: 1, column: 3 }],
          path: ['quote'],
          // retryAfter: the bucket refills in an hour; the "stack" is the message alone
          extensions: { code: 'rate_limited', retryAfter: 3600, stacktrace: [`Error: ${message}`] },
        },
      ],
    });
  });

  it('answers an open breaker with a GraphQL error carrying circuit_open, and passes your own errors on', async () => {
    const own = await query('{ fragile(fail: true) }');
    expect(own.errors![0]!.message).toBe('dependency down');
    expect(own.errors![0]!.extensions!.code).toBe('INTERNAL_SERVER_ERROR');
    const body = await query('{ fragile(fail: false) }');
    const message = 'A dependency is failing, so the request was not attempted; retry later.';
    expect(body.errors).toEqual([
      {
        message,
        locations: [{ line: 1, column: 3 }],
        path: ['fragile'],
        extensions: { code: 'circuit_open', retryAfter: 3600, stacktrace: [`Error: ${message}`] },
      },
    ]);
  });

  it('runs a resolver declared synchronous under the class policy', async () => {
    const body = await gql(app, '{ motto }');
    expect(body).toEqual({ data: { motto: 'steady' } });
  });

  it("gives a resolver its call's signal, aborted on the policy's timeout", async () => {
    const body = await query('{ slow }');
    expect(body.errors).toHaveLength(1);
    expect(body.errors![0]!.message).toBe('A dependency did not answer in time.');
    expect(body.errors![0]!.extensions).toMatchObject({ code: 'attempt_timeout' });
    expect(body.errors![0]!.extensions).not.toHaveProperty('retryAfter');
    const resolver = app.get(StockResolver);
    expect(resolver.signal).toBeInstanceOf(AbortSignal);
    expect(resolver.signal!.aborted).toBe(true);
  });
});

describe.each(ADAPTERS)('GraphQL resolvers of two applications alive at once (%s)', (adapter) => {
  let first: INestApplication;
  let second: INestApplication;

  beforeAll(async () => {
    first = await bootGraphQL(adapter);
    second = await bootGraphQL(adapter);
  });
  afterAll(async () => {
    await first?.close();
    await second?.close();
  });

  it("each run their own application's policies (rate-limit buckets)", async () => {
    await expect(gql(first, '{ quote }')).resolves.toEqual({ data: { quote: 42 } });
    await expect(gql(second, '{ quote }')).resolves.toEqual({ data: { quote: 42 } });
    const [a, b] = await Promise.all([gql(first, '{ quote }'), gql(second, '{ quote }')]);
    expect(a.errors![0]!.extensions!.code).toBe('rate_limited');
    expect(b.errors![0]!.extensions!.code).toBe('rate_limited');
  });
});
