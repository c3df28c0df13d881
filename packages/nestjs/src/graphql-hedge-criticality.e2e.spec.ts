import 'reflect-metadata';
import { Injectable, type INestApplication } from '@nestjs/common';
import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import {
  Args,
  Field,
  GraphQLModule,
  GraphQLSchemaHost,
  Int,
  ObjectType,
  Parent,
  Query,
  ResolveField,
  Resolver,
  Subscription,
} from '@nestjs/graphql';
import {
  Criticality as Level,
  HedgeStrategy,
  RateLimitStrategy,
  ResiliencePolicy,
  currentCriticality,
  currentSignal,
} from '@ballast/core';
import { FakeClock } from '@ballast/testing';
import { parse, subscribe, type ExecutionResult } from 'graphql';
import request from 'supertest';
import { ADAPTERS, bootApp, deferred, start, type AdapterName, type Deferred } from './__tests__/harness';
import { Criticality, Hedged, ResilienceModule, Resilient } from './index';

/**
 * Per test: the signals each hedged resolver's attempts got, and a promise resolved when the first attempt of one
 * started. The first attempt waits for its signal (it is the slow one); the others answer at once.
 */
let signals: Map<string, AbortSignal[]>;
let entered: Deferred<void>;
function hedgedAttempt(name: string): Promise<number> {
  const signal = currentSignal()!;
  const list = signals.get(name) ?? [];
  signals.set(name, list);
  list.push(signal);
  const n = list.length;
  if (n > 1) return Promise.resolve(n);
  entered.resolve();
  return new Promise((_, reject) =>
    signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true }),
  );
}

@ObjectType()
class Quote {
  @Field(() => Int)
  attempt!: number;
}

@Injectable()
class LevelReader {
  /** A decorated provider the resolver calls: it sees the level the resolver's decorator bound. */
  @Resilient('open')
  async level(): Promise<number> {
    return currentCriticality();
  }
}

@Resolver(() => Quote)
class QuoteResolver {
  constructor(private readonly reader: LevelReader) {}

  @Query(() => Quote)
  @Hedged('hedged')
  async hedgedQuote(): Promise<Quote> {
    return { attempt: await hedgedAttempt('query') };
  }

  @Query(() => Quote)
  quote(): Quote {
    return { attempt: 0 };
  }

  @ResolveField(() => Int)
  @Hedged('hedged')
  async price(@Parent() quote: Quote): Promise<number> {
    return quote.attempt === 0 ? hedgedAttempt('field') : -1;
  }

  @ResolveField(() => Int)
  @Criticality('CRITICAL')
  async fieldLevel(@Parent() _quote: Quote): Promise<number> {
    return currentCriticality();
  }

  @Query(() => Int)
  @Criticality('CRITICAL')
  async critical(): Promise<number> {
    return currentCriticality();
  }

  @Query(() => [Int])
  @Criticality('BEST_EFFORT')
  @Resilient('open')
  async sheddable(): Promise<number[]> {
    return [currentCriticality(), currentSignal() === undefined ? 0 : 1, await this.reader.level()];
  }
}

/** The class-level decorators cover every query of the class; its subscription is not a call. */
@Resolver()
@Resilient('limited')
@Criticality('DEGRADED')
class TickResolver {
  @Query(() => Int)
  async tickLevel(): Promise<number> {
    return currentCriticality();
  }

  /** A decorator on the subscription itself applies to opening it. */
  @Subscription(() => Int)
  @Resilient('limited-open')
  async *guardedTicks(): AsyncGenerator<{ guardedTicks: number }> {
    yield { guardedTicks: 1 };
  }

  @Subscription(() => Int)
  async *ticks(@Args('count', { type: () => Int }) count: number): AsyncGenerator<{ ticks: number }> {
    for (let i = 1; i <= count; i++) yield { ticks: i };
  }
}

function boot(adapter: AdapterName, clock: FakeClock): Promise<INestApplication> {
  return bootApp(adapter, {
    imports: [
      ResilienceModule.forRoot({
        clock,
        policies: [
          new ResiliencePolicy({
            name: 'hedged',
            strategies: [],
            hedge: new HedgeStrategy({ delay: 100, maxAttempts: 2 }),
          }),
          new ResiliencePolicy({ name: 'open', strategies: [] }),
          new ResiliencePolicy({
            name: 'limited',
            strategies: [new RateLimitStrategy({ permits: 1, per: '1h' })],
          }),
          new ResiliencePolicy({
            name: 'limited-open',
            strategies: [new RateLimitStrategy({ permits: 1, per: '1h' })],
          }),
        ],
      }),
      GraphQLModule.forRoot<ApolloDriverConfig>({ driver: ApolloDriver, autoSchemaFile: true }),
    ],
    providers: [LevelReader, QuoteResolver, TickResolver],
  });
}

interface GqlResponse {
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
}

describe.each(ADAPTERS)(
  '@Hedged and @Criticality on GraphQL resolvers, and subscriptions (Apollo, %s)',
  (adapter) => {
    let app: INestApplication;
    let clock: FakeClock;
    const gql = async (query: string): Promise<GqlResponse> => {
      const res = await request(app.getHttpServer() as never)
        .post('/graphql')
        .send({ query });
      expect(res.status).toBe(200);
      return res.body as GqlResponse;
    };

    beforeEach(async () => {
      signals = new Map();
      entered = deferred();
      clock = new FakeClock();
      app = await boot(adapter, clock);
    });
    afterEach(async () => {
      await app?.close();
    });

    it.each([
      ['a query', 'query', '{ hedgedQuote { attempt } }', { hedgedQuote: { attempt: 2 } }],
      ['a field resolver', 'field', '{ quote { price } }', { quote: { price: 2 } }],
    ])(
      '@Hedged on %s races a second attempt after the delay and aborts the loser',
      async (_, name, query, data) => {
        const answer = start(gql(query));
        await entered.promise;
        expect(signals.get(name)).toHaveLength(1);
        await clock.advance(100);
        await expect(answer).resolves.toEqual({ data });
        expect(signals.get(name)!.map((s) => s.aborted)).toEqual([true, false]);
      },
    );

    it('@Criticality on a query binds the level for the resolver', async () => {
      await expect(gql('{ critical }')).resolves.toEqual({ data: { critical: Level.CRITICAL } });
    });

    it('@Criticality on a field resolver binds the level for it', async () => {
      await expect(gql('{ quote { fieldLevel } }')).resolves.toEqual({
        data: { quote: { fieldLevel: Level.CRITICAL } },
      });
    });

    it('@Criticality with @Resilient: the call and the providers it calls see the level', async () => {
      await expect(gql('{ sheddable }')).resolves.toEqual({
        data: { sheddable: [Level.BEST_EFFORT, 1, Level.BEST_EFFORT] },
      });
    });

    it('a class-level @Resilient leaves subscriptions alone: they run, and spend none of its permits', async () => {
      const schema = app.get(GraphQLSchemaHost).schema;
      const document = parse('subscription { ticks(count: 3) }');
      for (let round = 0; round < 2; round++) {
        const stream = await subscribe({ schema, document, contextValue: {} });
        expect(stream).toHaveProperty([Symbol.asyncIterator]);
        const received: unknown[] = [];
        for await (const result of stream as AsyncIterable<ExecutionResult>) received.push(result);
        expect(received).toEqual([1, 2, 3].map((ticks) => ({ data: { ticks } })));
      }
      // the class's one permit is still there for its query, which runs under the class's level
      await expect(gql('{ tickLevel }')).resolves.toEqual({ data: { tickLevel: Level.DEGRADED } });
      const refused = await gql('{ tickLevel }');
      expect(refused.errors![0]!.extensions!.code).toBe('rate_limited');
    });

    it('a @Resilient on the @Subscription method runs its policy when the subscription opens', async () => {
      const schema = app.get(GraphQLSchemaHost).schema;
      const document = parse('subscription { guardedTicks }');
      const first = (await subscribe({
        schema,
        document,
        contextValue: {},
      })) as AsyncIterable<ExecutionResult>;
      const received: unknown[] = [];
      for await (const result of first) received.push(result);
      expect(received).toEqual([{ data: { guardedTicks: 1 } }]);
      const second = (await subscribe({ schema, document, contextValue: {} })) as ExecutionResult;
      expect(second.errors![0]!.extensions!.code).toBe('rate_limited');
    });
  },
);
