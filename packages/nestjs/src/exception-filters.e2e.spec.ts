import 'reflect-metadata';
import {
  Catch,
  Controller,
  Get,
  HttpException,
  Injectable,
  NotFoundException,
  type ArgumentsHost,
  type ExceptionFilter,
  type INestApplication,
  Module,
  type ModuleMetadata,
} from '@nestjs/common';
import { APP_FILTER, ApplicationConfig, BaseExceptionFilter, HttpAdapterHost } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { RateLimitStrategy, ResilienceError, ResiliencePolicy } from '@ballast/core';
import { FakeClock } from '@ballast/testing';
import request from 'supertest';
import { ADAPTERS, type AdapterName } from './__tests__/harness';
import {
  ClientClosedRequestError,
  ResilienceExceptionFilter,
  Resilient,
  ResilienceModule,
  mapResilienceError,
} from './index';

/** What the application's own catch-all saw. */
@Injectable()
class Seen {
  readonly exceptions: unknown[] = [];
}
const seen = new Seen();

/** A typical application catch-all (Nest's docs' "AllExceptionsFilter"): its own envelope for everything. */
@Catch()
class AllFilter implements ExceptionFilter {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    seen.exceptions.push(exception);
    const status = exception instanceof HttpException ? exception.getStatus() : 500;
    const response: unknown = host.switchToHttp().getResponse();
    this.adapterHost.httpAdapter.reply(response, { handledBy: 'AllFilter', status }, status);
  }
}

/** The README's recipe 1: a catch-all that hands Ballast's rejections to Ballast's filter. */
@Catch()
class DelegatingAllFilter extends AllFilter {
  readonly #ballast: ResilienceExceptionFilter;

  constructor(adapterHost: HttpAdapterHost) {
    super(adapterHost);
    this.#ballast = new ResilienceExceptionFilter(adapterHost);
  }

  override catch(exception: unknown, host: ArgumentsHost): void {
    if (mapResilienceError(exception) !== undefined || exception instanceof ClientClosedRequestError) {
      this.#ballast.catch(exception, host);
      return;
    }
    super.catch(exception, host);
  }
}

/** The README's recipe 2: a catch-all that writes the mapping itself, in its own envelope. */
@Catch()
class MappingAllFilter extends AllFilter {
  constructor(private readonly host: HttpAdapterHost) {
    super(host);
  }

  override catch(exception: unknown, host: ArgumentsHost): void {
    const mapped = mapResilienceError(exception);
    if (mapped === undefined) return super.catch(exception, host);
    const { httpAdapter } = this.host;
    const response: unknown = host.switchToHttp().getResponse();
    if (mapped.retryAfterSeconds !== undefined)
      httpAdapter.setHeader(response, 'Retry-After', String(mapped.retryAfterSeconds));
    httpAdapter.reply(response, { ...mapped.body, envelope: 'mine' }, mapped.status);
  }
}

/** A filter for one error class only, registered below Ballast's: it must still get what Ballast does not map. */
class SecretError extends ResilienceError {}
@Catch(SecretError)
class SecretFilter implements ExceptionFilter {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(_exception: unknown, host: ArgumentsHost): void {
    this.adapterHost.httpAdapter.reply(host.switchToHttp().getResponse(), { handledBy: 'SecretFilter' }, 418);
  }
}

@Controller()
class FilteredController {
  @Get('limited')
  @Resilient('limited')
  limited(): { ok: true } {
    return { ok: true };
  }

  /** A ResilienceError Ballast did not raise for this request (no policy): not mapped. */
  @Get('misconfigured')
  misconfigured(): never {
    throw new ResilienceError({ kind: 'configuration', message: "Unknown policy 'secret'" });
  }

  @Get('secret')
  secret(): never {
    throw new SecretError({ kind: 'configuration', message: 'secret' });
  }

  @Get('missing')
  missing(): never {
    throw new NotFoundException('no such thing');
  }
}

/** The application's filter in a feature module of its own. */
@Module({ providers: [{ provide: APP_FILTER, useClass: AllFilter }] })
class FiltersModule {}

function module(
  providers: ModuleMetadata['providers'] = [],
  order: { before?: ModuleMetadata['imports']; after?: ModuleMetadata['imports'] } = {},
): ModuleMetadata {
  return {
    imports: [
      ...(order.before ?? []),
      ResilienceModule.forRoot({
        clock: new FakeClock(),
        policies: [
          new ResiliencePolicy({
            name: 'limited',
            strategies: [new RateLimitStrategy({ permits: 1, per: '1m' })],
          }),
        ],
      }),
      ...(order.after ?? []),
    ],
    controllers: [FilteredController],
    providers,
  };
}

/** Like the harness's bootApp, with a hook between creating the app and initialising it (useGlobalFilters). */
async function boot(
  adapter: AdapterName,
  metadata: ModuleMetadata,
  configure: (app: INestApplication) => void = () => {},
): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule(metadata).compile();
  const app = moduleRef.createNestApplication(
    adapter === 'express' ? new ExpressAdapter() : new FastifyAdapter(),
    { logger: false },
  );
  configure(app);
  await app.init();
  if (adapter === 'fastify')
    await (app.getHttpAdapter().getInstance() as { ready(): Promise<unknown> }).ready();
  return app;
}

describe.each(ADAPTERS)("Ballast's filter next to the application's own filters (%s)", (adapter) => {
  let app: INestApplication | undefined;
  const http = () => request(app!.getHttpServer());

  beforeEach(() => {
    seen.exceptions.length = 0;
  });
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  async function expectMapped429(extra: Record<string, unknown> = {}): Promise<void> {
    await http().get('/limited').expect(200);
    const res = await http().get('/limited').expect(429);
    expect(res.headers['retry-after']).toBe('60');
    expect(res.body).toMatchObject({ statusCode: 429, code: 'rate_limited', ...extra });
  }

  describe('a catch-all registered as APP_FILTER', () => {
    beforeEach(async () => {
      app = await boot(adapter, module([{ provide: APP_FILTER, useClass: AllFilter }]));
    });

    it('still gets the mapping for Ballast rejections, Retry-After included', async () => {
      await expectMapped429();
      expect(seen.exceptions).toEqual([]);
    });

    it("gets the ResilienceErrors Ballast does not map, instead of Ballast's own 500", async () => {
      const res = await http().get('/misconfigured').expect(500);
      expect(res.body).toEqual({ handledBy: 'AllFilter', status: 500 });
      expect(seen.exceptions).toEqual([expect.any(ResilienceError)]);
    });

    it('gets every other error, as before', async () => {
      await http().get('/missing').expect(404, { handledBy: 'AllFilter', status: 404 });
    });
  });

  // Nest applies APP_FILTERs in the order it scans modules: the root module, then its imports depth-first.
  it('keeps the mapping with a catch-all APP_FILTER in a module imported before ResilienceModule', async () => {
    app = await boot(adapter, module([], { before: [FiltersModule] }));
    await expectMapped429();
    await http().get('/misconfigured').expect(500, { handledBy: 'AllFilter', status: 500 });
  });

  it('loses it to a catch-all APP_FILTER in a module imported after ResilienceModule (registered later)', async () => {
    app = await boot(adapter, module([], { after: [FiltersModule] }));
    await http().get('/limited').expect(200);
    await http().get('/limited').expect(500, { handledBy: 'AllFilter', status: 500 });
  });

  it('hands an unmapped ResilienceError to the next filter that catches it, not to a catch-all above it', async () => {
    app = await boot(
      adapter,
      module([
        { provide: APP_FILTER, useClass: AllFilter },
        { provide: APP_FILTER, useClass: SecretFilter },
      ]),
    );
    await http().get('/secret').expect(418, { handledBy: 'SecretFilter' });
    await http().get('/misconfigured').expect(500, { handledBy: 'AllFilter', status: 500 });
  });

  it("answers an unmapped ResilienceError like Nest's default handler when no other filter catches it", async () => {
    app = await boot(adapter, module());
    await http().get('/misconfigured').expect(500, { statusCode: 500, message: 'Internal server error' });
    await http().get('/missing').expect(404);
  });

  describe('a catch-all registered with app.useGlobalFilters (it wins over every APP_FILTER)', () => {
    it('sees Ballast rejections itself (Nest picks one filter): a plain catch-all answers them 500', async () => {
      app = await boot(adapter, module(), (a) => a.useGlobalFilters(new AllFilter(a.get(HttpAdapterHost))));
      await http().get('/limited').expect(200);
      await http().get('/limited').expect(500, { handledBy: 'AllFilter', status: 500 });
    });

    it('gets the mapping by handing mapped errors to a ResilienceExceptionFilter (README recipe)', async () => {
      app = await boot(adapter, module(), (a) =>
        a.useGlobalFilters(new DelegatingAllFilter(a.get(HttpAdapterHost))),
      );
      await expectMapped429();
      await http().get('/misconfigured').expect(500, { handledBy: 'AllFilter', status: 500 });
      await http().get('/missing').expect(404, { handledBy: 'AllFilter', status: 404 });
    });

    it('gets the mapping in its own envelope with mapResilienceError (README recipe)', async () => {
      app = await boot(adapter, module(), (a) =>
        a.useGlobalFilters(new MappingAllFilter(a.get(HttpAdapterHost))),
      );
      await expectMapped429({ envelope: 'mine' });
      await http().get('/misconfigured').expect(500, { handledBy: 'AllFilter', status: 500 });
    });

    it("gets it by registering Ballast's filter after its own, which then hands it the rest", async () => {
      app = await boot(adapter, module(), (a) =>
        a.useGlobalFilters(
          new AllFilter(a.get(HttpAdapterHost)),
          new ResilienceExceptionFilter(a.get(HttpAdapterHost), a.get(ApplicationConfig)),
        ),
      );
      await expectMapped429();
      await http().get('/misconfigured').expect(500, { handledBy: 'AllFilter', status: 500 });
      await http().get('/missing').expect(404, { handledBy: 'AllFilter', status: 404 });
    });
  });

  it('leaves a user filter extending BaseExceptionFilter the errors Ballast does not map', async () => {
    @Catch()
    class Extending extends BaseExceptionFilter {
      override catch(exception: unknown, host: ArgumentsHost): void {
        seen.exceptions.push(exception);
        super.catch(exception, host);
      }
    }
    app = await boot(adapter, module([{ provide: APP_FILTER, useClass: Extending }]));
    await expectMapped429();
    await http().get('/misconfigured').expect(500, { statusCode: 500, message: 'Internal server error' });
    expect(seen.exceptions).toEqual([expect.any(ResilienceError)]);
  });
});
