import 'reflect-metadata';
import {
  Controller,
  Get,
  Inject,
  Injectable,
  Param,
  Post,
  Scope,
  ServiceUnavailableException,
  type INestApplication,
} from '@nestjs/common';
import { REQUEST } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import {
  CircuitBreakerStrategy,
  RateLimitStrategy,
  Resilience,
  ResiliencePolicy,
  currentSignal,
  isResilienceError,
  type ResilienceEvent,
} from '@ballast/core';
import { FakeClock } from '@ballast/testing';
// A value import: `design:returntype` must see the Observable class for the method to be wrapped lazily.
import { Observable, defer, lastValueFrom, of, toArray } from 'rxjs';
import request from 'supertest';
import { ADAPTERS, bootApp, bootstrapError } from './__tests__/harness';
import { Resilient, ResilienceModule } from './index';

function policies(): ResiliencePolicy[] {
  return [
    new ResiliencePolicy({
      name: 'inventory',
      strategies: [
        new RateLimitStrategy({ permits: 1, per: '1m' }),
        new CircuitBreakerStrategy({
          failureRatio: 0.5,
          samplingWindow: '10s',
          minThroughput: 2,
          breakDuration: '5s',
        }),
      ],
    }),
    new ResiliencePolicy({ name: 'plain', strategies: [] }),
  ];
}

/** Where outbound calls live: a provider whose methods are decorated, called by an undecorated controller. */
@Injectable()
class InventoryClient {
  readonly signals: (AbortSignal | undefined)[] = [];
  failStream = false;
  subscriptions = 0;

  @Resilient('plain')
  async get(id: string): Promise<{ id: string; stock: number }> {
    this.signals.push(currentSignal());
    return { id, stock: 7 };
  }

  @Resilient('inventory')
  async reserve(id: string): Promise<string> {
    return `reserved ${id}`;
  }

  @Resilient('plain', { route: 'levels' })
  levels(): Observable<number> {
    return defer(() => {
      this.subscriptions++;
      return of(1, 2, 3);
    });
  }

  @Resilient('inventory', { route: 'feed' })
  async *feed(n: number): AsyncGenerator<number> {
    for (let i = 0; i < n; i++) yield i;
    if (this.failStream) throw new ServiceUnavailableException('feed broke');
  }

  /** Typed loosely on purpose: no `design:returntype` of Observable. */
  @Resilient('plain')
  untyped(): any {
    return of(1);
  }

  undecorated(): AbortSignal | undefined {
    return currentSignal();
  }
}

@Injectable({ scope: Scope.REQUEST })
class PerRequestClient {
  constructor(@Inject(REQUEST) private readonly request: { headers: Record<string, unknown> }) {}

  /** Reads its own request through `this`: a wrapper that ran another request's instance would answer wrong. */
  @Resilient('plain', { route: 'per-request' })
  async whoami(): Promise<string> {
    await Promise.resolve();
    const wrapped = currentSignal() === undefined ? 'bare' : 'wrapped';
    return `${wrapped}:${String(this.request.headers['x-tenant'])}`;
  }
}

@Controller('catalog')
class CatalogController {
  constructor(
    private readonly inventory: InventoryClient,
    private readonly perRequest: PerRequestClient,
  ) {}

  @Get('scoped')
  scoped(): Promise<string> {
    return this.perRequest.whoami();
  }

  @Get(':id')
  product(@Param('id') id: string): Promise<{ id: string; stock: number }> {
    return this.inventory.get(id);
  }

  @Post(':id/reserve')
  reserve(@Param('id') id: string): Promise<string> {
    return this.inventory.reserve(id);
  }
}

async function drain<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of iterable) out.push(x);
  return out;
}

describe.each(ADAPTERS)('decorated provider methods (%s)', (adapter) => {
  let app: INestApplication;
  let inventory: InventoryClient;
  let resilience: Resilience;
  let events: ResilienceEvent[];
  let clock: FakeClock;

  beforeEach(async () => {
    clock = new FakeClock();
    app = await bootApp(adapter, {
      imports: [ResilienceModule.forRoot({ policies: policies(), clock })],
      controllers: [CatalogController],
      providers: [InventoryClient, PerRequestClient],
    });
    inventory = app.get(InventoryClient);
    resilience = app.get(Resilience);
    events = [];
    resilience.on((e) => events.push(e));
  });
  afterEach(async () => {
    await app.close();
  });

  it('runs a decorated method under its policy; the method receives nothing new and reads currentSignal()', async () => {
    await request(app.getHttpServer()).get('/catalog/p1').expect(200, { id: 'p1', stock: 7 });
    expect(inventory.signals[0]).toBeInstanceOf(AbortSignal);
    expect(inventory.undecorated()).toBeUndefined();
    expect(events.find((e) => e.type === 'call')).toMatchObject({
      policy: 'plain',
      route: undefined,
      outcome: 'success',
    });
  });

  it('maps a rejection raised inside a provider through the global filter', async () => {
    await request(app.getHttpServer()).post('/catalog/p1/reserve').expect(201);
    const res = await request(app.getHttpServer()).post('/catalog/p1/reserve').expect(429);
    expect(res.body).toMatchObject({ code: 'rate_limited' });
    expect(res.headers['retry-after']).toBe('60');
  });

  it('wraps request-scoped providers too, each request running its own instance', async () => {
    const tenants = ['a', 'b', 'c', 'd'];
    const answers = await Promise.all(
      tenants.map((t) => request(app.getHttpServer()).get('/catalog/scoped').set('x-tenant', t).expect(200)),
    );
    expect(answers.map((res) => res.text)).toEqual(tenants.map((t) => `wrapped:${t}`));
    expect(events.find((e) => e.type === 'call')).toMatchObject({ route: 'per-request' });
  });

  it('refuses to turn an Observable method without return-type metadata into a Promise', async () => {
    const error: unknown = await inventory.untyped().catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'configuration' });
    expect((error as Error).message).toContain("Declare it as ': Observable<T>'");
  });

  it('keeps Observable methods lazy and observable', async () => {
    const levels = inventory.levels();
    expect(inventory.subscriptions).toBe(0);
    expect(await lastValueFrom(levels.pipe(toArray()))).toEqual([1, 2, 3]);
    expect(events.find((e) => e.type === 'call')).toMatchObject({ policy: 'plain', route: 'levels' });
  });

  describe('async generators: the breaker only', () => {
    it('streams without touching the rate limit', async () => {
      expect(await drain(inventory.feed(3))).toEqual([0, 1, 2]);
      expect(await drain(inventory.feed(2))).toEqual([0, 1]); // a second run would be rate limited
      expect(await drain(inventory.feed(1))).toEqual([0]);
    });

    it('gates the opening on the breaker; mid-stream failures count', async () => {
      inventory.failStream = true;
      await expect(drain(inventory.feed(2))).rejects.toThrow('feed broke');
      await expect(drain(inventory.feed(2))).rejects.toThrow('feed broke');
      const refused = await drain(inventory.feed(2)).catch((e: unknown) => e);
      expect(isResilienceError(refused) && refused.code).toBe('circuit_open');
      inventory.failStream = false;
      await clock.advance(5000); // break duration: the next opening is the half-open probe
      expect(await drain(inventory.feed(2))).toEqual([0, 1]);
      expect(await drain(inventory.feed(1))).toEqual([0]);
    });

    it('refuses to open while forced open', async () => {
      await resilience.admin.forceOpen('inventory', 'feed');
      const refused = await drain(inventory.feed(1)).catch((e: unknown) => e);
      expect(isResilienceError(refused) && refused.code).toBe('resilience_forced_open');
    });
  });
});

describe('provider wrapping is per application', () => {
  it('gives each application its own Resilience for the same provider class', async () => {
    const boot = () =>
      Test.createTestingModule({
        imports: [ResilienceModule.forRoot({ policies: policies() })],
        providers: [InventoryClient],
      }).compile();
    const [a, b] = [await boot(), await boot()];
    await a.init();
    await b.init();
    try {
      await a.get(Resilience).admin.forceOpen('plain');
      await expect(a.get(InventoryClient).get('x')).rejects.toMatchObject({ code: 'resilience_forced_open' });
      await expect(b.get(InventoryClient).get('x')).resolves.toEqual({ id: 'x', stock: 7 });
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe('bootstrap validation', () => {
  @Injectable()
  class Misspelled {
    @Resilient('inventroy')
    async get(): Promise<void> {}
  }

  @Injectable()
  @Resilient('plain')
  class ClassLevel {
    async get(): Promise<void> {}
  }

  @Controller('x')
  class MisspelledController {
    @Get()
    @Resilient('plian')
    get(): void {}
  }

  const init = (providers: Array<new () => unknown>, controllers: Array<new () => unknown> = []) =>
    bootstrapError({ imports: [ResilienceModule.forRoot({ policies: policies() })], providers, controllers });

  it('fails to start when a provider method names an unknown policy', async () => {
    const error = await init([Misspelled]);
    expect(error).toMatchObject({ kind: 'configuration', code: 'unknown_policy' });
    expect((error as Error).message).toContain("Misspelled.get uses unknown policy 'inventroy'");
  });

  it('fails to start when a controller handler names an unknown policy', async () => {
    const error = await init([], [MisspelledController]);
    expect((error as Error).message).toContain("MisspelledController.get uses unknown policy 'plian'");
  });

  it('fails to start when a provider class (not its methods) is decorated', async () => {
    const error = await init([ClassLevel]);
    expect((error as Error).message).toContain(
      'ClassLevel: @Resilient/@Hedged on a provider class is not supported',
    );
  });
});
