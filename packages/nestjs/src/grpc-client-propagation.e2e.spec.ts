import 'reflect-metadata';
import { join } from 'node:path';
import {
  Controller,
  Inject,
  Injectable,
  Logger,
  type INestApplicationContext,
  type INestMicroservice,
  type OnModuleInit,
} from '@nestjs/common';
import { ClientsModule, GrpcMethod, Transport, type ClientGrpc } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import * as grpc from '@grpc/grpc-js';
import {
  Criticality,
  ResiliencePolicy,
  RetryStrategy,
  bindCriticality,
  currentCriticality,
  remainingTime,
  withDeadline,
} from '@ballast/core';
import { firstValueFrom, type Observable } from 'rxjs';
import { freePort } from './__tests__/harness';
import { ResilienceModule, Resilient } from './index';

/**
 * `headers.propagate: true` on `@nestjs/microservices` gRPC clients (SPEC §14.4): the module adds core's
 * grpcPropagationInterceptor to every ClientGrpcProxy provider's channel options, after the application's own
 * interceptors, without changing the application's options object, and takes it away on shutdown. One Nest gRPC
 * server (reading the `headers` option) answers what it was sent.
 */
const PROTO = join(__dirname, '__tests__', 'budget.proto');

interface Seen {
  remaining: number;
  hasDeadline: boolean;
  level: number;
}
interface BudgetService {
  seen(request: object, metadata?: grpc.Metadata, options?: grpc.CallOptions): Observable<Seen>;
}

@Controller()
class BudgetController {
  @GrpcMethod('Budget', 'Seen')
  @Resilient('plain')
  seen(): Seen {
    const left = remainingTime();
    return { remaining: left ?? 0, hasDeadline: left !== undefined, level: currentCriticality() };
  }
}

/** The application's own interceptor: it must keep running, before Ballast's. */
let userCalls = 0;
const userInterceptor: grpc.Interceptor = (options, nextCall) => {
  userCalls++;
  return new grpc.InterceptingCall(nextCall(options));
};

@Injectable()
class Callers implements OnModuleInit {
  interceptors!: BudgetService;
  providers!: BudgetService;
  /** Created in the constructor, before the module's init: not covered (a warning says so). */
  readonly early: BudgetService;

  constructor(
    @Inject('INTERCEPTORS') private readonly a: ClientGrpc,
    @Inject('PROVIDERS') private readonly b: ClientGrpc,
    @Inject('EARLY') early: ClientGrpc,
  ) {
    this.early = early.getService<BudgetService>('Budget');
  }

  onModuleInit(): void {
    this.interceptors = this.a.getService<BudgetService>('Budget');
    this.providers = this.b.getService<BudgetService>('Budget');
  }
}

const plain = new ResiliencePolicy({ name: 'plain', strategies: [new RetryStrategy({ maxAttempts: 1 })] });

describe('headers.propagate on @nestjs/microservices gRPC clients', () => {
  let server: INestMicroservice;
  let app: INestApplicationContext;
  let callers: Callers;
  const warnings: string[] = [];
  const clientOptions = (url: string, channelOptions: Record<string, unknown>) => ({
    package: 'budget',
    protoPath: PROTO,
    url,
    channelOptions,
  });
  let interceptorsOptions: ReturnType<typeof clientOptions>;

  beforeAll(async () => {
    const port = await freePort();
    const url = `127.0.0.1:${port}`;
    const serverRef = await Test.createTestingModule({
      imports: [ResilienceModule.forRoot({ headers: { criticality: 'x-criticality' }, policies: [plain] })],
      controllers: [BudgetController],
    }).compile();
    server = serverRef.createNestMicroservice({
      transport: Transport.GRPC,
      options: { package: 'budget', protoPath: PROTO, url },
      logger: false,
    });
    await server.listen();

    interceptorsOptions = clientOptions(url, { interceptors: [userInterceptor] });
    jest.spyOn(Logger.prototype, 'warn').mockImplementation((message: unknown) => {
      warnings.push(String(message));
    });
    const clientRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({
          headers: { criticality: 'x-criticality', propagate: true },
          policies: [plain],
        }),
        ClientsModule.register([
          { name: 'INTERCEPTORS', transport: Transport.GRPC, options: interceptorsOptions },
          {
            name: 'PROVIDERS',
            transport: Transport.GRPC,
            options: clientOptions(url, { interceptor_providers: [() => userInterceptor] }),
          },
          { name: 'EARLY', transport: Transport.GRPC, options: clientOptions(url, {}) },
        ]),
      ],
      providers: [Callers],
    }).compile();
    app = await clientRef.init();
    callers = app.get(Callers);
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await app?.close();
    await server?.close();
  });

  const inScope = <T>(budget: number, level: number, fn: () => Promise<T>) =>
    withDeadline(budget, () => bindCriticality(level as Criticality, fn));

  it('a call made inside a deadline and criticality scope carries both; the application’s interceptor runs too', async () => {
    const before = userCalls;
    const reply = await inScope(5000, Criticality.CRITICAL, () =>
      firstValueFrom(callers.interceptors.seen({})),
    );
    expect(reply.level).toBe(Criticality.CRITICAL);
    expect(reply.hasDeadline).toBe(true);
    expect(reply.remaining).toBeGreaterThan(0);
    expect(reply.remaining).toBeLessThanOrEqual(5000);
    expect(userCalls).toBe(before + 1);
    // the application's options object is the same as it was given: a copy got the interceptor
    expect(interceptorsOptions.channelOptions).toEqual({ interceptors: [userInterceptor] });
  });

  it('works beside interceptor_providers (grpc-js refuses both lists at once: Ballast joins the one in use)', async () => {
    const before = userCalls;
    const reply = await inScope(5000, Criticality.DEGRADED, () => firstValueFrom(callers.providers.seen({})));
    expect([reply.level, reply.hasDeadline, userCalls]).toEqual([Criticality.DEGRADED, true, before + 1]);
  });

  it('the caller’s own metadata and deadline win', async () => {
    const metadata = new grpc.Metadata();
    metadata.set('x-criticality', 'best_effort');
    const reply = await inScope(5000, Criticality.CRITICAL, () =>
      firstValueFrom(callers.interceptors.seen({}, metadata, { deadline: Date.now() + 60_000 })),
    );
    expect(reply.level).toBe(Criticality.BEST_EFFORT);
    expect(reply.remaining).toBeGreaterThan(5000);
  });

  it('outside any scope nothing is sent', async () => {
    const reply = await firstValueFrom(callers.interceptors.seen({}));
    expect(reply).toEqual({ remaining: 0, hasDeadline: false, level: Criticality.NORMAL });
  });

  it('a service client created before the application’s init is not covered, and a warning says so', async () => {
    expect(warnings).toEqual([expect.stringContaining('EARLY created its clients for Budget')]);
    const reply = await inScope(5000, Criticality.CRITICAL, () => firstValueFrom(callers.early.seen({})));
    expect([reply.level, reply.hasDeadline]).toEqual([Criticality.NORMAL, false]);
  });

  it('shutdown gives the proxy its own options back', async () => {
    const proxy = app.get<{ options: unknown }>('INTERCEPTORS');
    expect(proxy.options).not.toBe(interceptorsOptions);
    await app.close();
    expect(proxy.options).toBe(interceptorsOptions);
  });
});
