import 'reflect-metadata';
import {
  Controller,
  Get,
  Global,
  Injectable,
  Module,
  Scope,
  type DynamicModule,
  type INestApplication,
  type OnApplicationBootstrap,
  type OnModuleInit,
  type Type,
} from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  RateLimitStrategy,
  Resilience,
  ResiliencePolicy,
  currentSignal,
  type ResilienceEvent,
} from '@ballast/core';
import { FakeClock } from '@ballast/testing';
import request from 'supertest';
import { ADAPTERS, bootApp } from './__tests__/harness';
import { Resilient, ResilienceModule } from './index';

function policies(): ResiliencePolicy[] {
  return [
    new ResiliencePolicy({ name: 'plain', strategies: [] }),
    new ResiliencePolicy({ name: 'limited', strategies: [new RateLimitStrategy({ permits: 2, per: '1m' })] }),
  ];
}

function resilienceModule(clock = new FakeClock()): DynamicModule {
  return ResilienceModule.forRoot({ policies: policies(), clock });
}

/**
 * The explorer wraps decorated provider methods in a lifecycle hook. Users call their providers from their own
 * lifecycle hooks (a cache warm-up in onModuleInit, a subscription in onApplicationBootstrap): those calls must
 * already run under the policy, whatever the order of `imports`.
 */
describe('provider methods are wrapped before any user lifecycle hook runs', () => {
  @Injectable()
  class CacheClient {
    @Resilient('plain')
    async load(): Promise<string> {
      return currentSignal() === undefined ? 'bare' : 'wrapped';
    }
  }

  @Injectable()
  class Warmup implements OnModuleInit, OnApplicationBootstrap {
    atInit: string | undefined;
    atBootstrap: string | undefined;
    constructor(private readonly cache: CacheClient) {}
    async onModuleInit(): Promise<void> {
      this.atInit = await this.cache.load();
    }
    async onApplicationBootstrap(): Promise<void> {
      this.atBootstrap = await this.cache.load();
    }
  }

  @Global()
  @Module({ providers: [CacheClient, Warmup], exports: [CacheClient] })
  class SharedGlobalModule {}

  @Module({ providers: [CacheClient, Warmup] })
  class FeatureModule {}

  /** The hook of the module class itself runs after its providers'. */
  @Global()
  @Module({ providers: [CacheClient], exports: [CacheClient] })
  class SelfWarmingGlobalModule implements OnModuleInit {
    atInit: string | undefined;
    constructor(private readonly cache: CacheClient) {}
    async onModuleInit(): Promise<void> {
      this.atInit = await this.cache.load();
    }
  }

  it.each<[string, () => Array<Type | DynamicModule>]>([
    ['a @Global() module imported before ResilienceModule', () => [SharedGlobalModule, resilienceModule()]],
    ['a @Global() module imported after ResilienceModule', () => [resilienceModule(), SharedGlobalModule]],
    ['a plain module imported before ResilienceModule', () => [FeatureModule, resilienceModule()]],
    [
      'a @Global() module imported before ResilienceModule.forRootAsync',
      () => [
        SharedGlobalModule,
        ResilienceModule.forRootAsync({ useFactory: async () => ({ policies: policies() }) }),
      ],
    ],
  ])('%s', async (_, imports) => {
    const moduleRef = await Test.createTestingModule({ imports: imports() }).compile();
    await moduleRef.init();
    try {
      const warmup = moduleRef.get(Warmup);
      expect([warmup.atInit, warmup.atBootstrap]).toEqual(['wrapped', 'wrapped']);
    } finally {
      await moduleRef.close();
    }
  });

  it("a @Global() module class's own onModuleInit, imported first", async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [SelfWarmingGlobalModule, resilienceModule()],
    }).compile();
    await moduleRef.init();
    try {
      expect(moduleRef.get(SelfWarmingGlobalModule).atInit).toBe('wrapped');
    } finally {
      await moduleRef.close();
    }
  });

  it.each(ADAPTERS)('in an HTTP application too (%s)', async (adapter) => {
    const app = await bootApp(adapter, { imports: [SharedGlobalModule, resilienceModule()] });
    try {
      expect(app.get(Warmup).atInit).toBe('wrapped');
    } finally {
      await app.close();
    }
  });
});

/**
 * A request-scoped base class with a decorated method, extended by a static provider: the base's prototype gets
 * the wrapper, and the subclass inherits it. The subclass's instance must get a wrapper of the *original* method,
 * not a wrapper of the wrapper — one call, one policy run (one rate-limit token).
 */
describe('inherited decorated methods run the policy once', () => {
  /** Fresh classes per test: a request-scoped prototype stays wrapped after its application closed. */
  function classes() {
    @Injectable({ scope: Scope.REQUEST })
    class BaseClient {
      @Resilient('limited')
      async get(): Promise<string> {
        return `${this.constructor.name}:${currentSignal() === undefined ? 'bare' : 'wrapped'}`;
      }
    }

    @Injectable()
    class StaticClient extends BaseClient {}

    @Injectable({ scope: Scope.TRANSIENT })
    class TransientBase {
      @Resilient('limited')
      async get(): Promise<string> {
        return 'transient';
      }
    }

    @Injectable()
    class StaticOfTransient extends TransientBase {}

    @Controller('inherited')
    class InheritedController {
      constructor(private readonly base: BaseClient) {}
      @Get()
      get(): Promise<string> {
        return this.base.get();
      }
    }
    return { BaseClient, StaticClient, TransientBase, StaticOfTransient, InheritedController };
  }

  let app: INestApplication | undefined;
  let events: ResilienceEvent[];
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  async function boot(providers: Type[], controllers: Type[] = []): Promise<INestApplication> {
    app = await bootApp('express', { imports: [resilienceModule()], providers, controllers });
    events = [];
    app.get(Resilience).on((e) => events.push(e));
    return app;
  }
  const runs = () => events.filter((e) => e.type === 'call').length;

  async function expectOneRunPerCall(call: () => Promise<string>, expected: string): Promise<void> {
    await expect(call()).resolves.toBe(expected);
    expect(runs()).toBe(1);
    // 'limited' allows 2 per minute: the second call is the last one let through
    await expect(call()).resolves.toBe(expected);
    await expect(call()).rejects.toMatchObject({ code: 'rate_limited' });
  }

  it('a static subclass of a request-scoped base listed first', async () => {
    const { BaseClient, StaticClient } = classes();
    const client = (await boot([BaseClient, StaticClient])).get(StaticClient);
    await expectOneRunPerCall(() => client.get(), 'StaticClient:wrapped');
  });

  it('a static subclass listed before its request-scoped base', async () => {
    const { BaseClient, StaticClient } = classes();
    const client = (await boot([StaticClient, BaseClient])).get(StaticClient);
    await expectOneRunPerCall(() => client.get(), 'StaticClient:wrapped');
  });

  it('a static subclass in a second application, its base prototype wrapped by the first', async () => {
    const { BaseClient, StaticClient } = classes();
    await boot([StaticClient, BaseClient]);
    await app!.close();
    const client = (await boot([StaticClient, BaseClient])).get(StaticClient);
    await expectOneRunPerCall(() => client.get(), 'StaticClient:wrapped');
  });

  it('the request-scoped base itself, beside its static subclass', async () => {
    const { BaseClient, StaticClient, InheritedController } = classes();
    const server = (await boot([BaseClient, StaticClient], [InheritedController])).getHttpServer();
    await request(server).get('/inherited').expect(200, 'BaseClient:wrapped');
    expect(runs()).toBe(1);
    await request(server).get('/inherited').expect(200);
    await request(server).get('/inherited').expect(429);
  });

  it('a static subclass of a transient base', async () => {
    const { TransientBase, StaticOfTransient } = classes();
    const client = (await boot([TransientBase, StaticOfTransient])).get(StaticOfTransient);
    await expectOneRunPerCall(() => client.get(), 'transient');
  });
});
