import 'reflect-metadata';
import { join } from 'node:path';
import { Controller, Inject, type INestMicroservice, type OnModuleInit } from '@nestjs/common';
import { ClientsModule, GrpcMethod, Transport, type ClientGrpc } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import {
  BulkheadStrategy,
  Criticality,
  Resilience,
  ResiliencePolicy,
  RetryStrategy,
  currentCriticality,
  currentSignal,
  remainingTime,
} from '@ballast/core';
import { FakeClock } from '@ballast/testing';
import { firstValueFrom, type Observable } from 'rxjs';
import { deferred, freePort, type Deferred } from './__tests__/harness';
import { ResilienceModule, Resilient } from './index';

/**
 * Deadline and criticality across services over real gRPC (SPEC §14.4): three Nest gRPC microservices in this
 * process, A → B → C, A and B calling the next hop through a `@nestjs/microservices` `ClientGrpc`, each with
 * `headers: { …, propagate: true }` — which installs core's grpcPropagationInterceptor on those clients. The test is
 * the caller of A (a plain grpc-js client). grpc-js keeps deadlines on the real clock (its own timers, `Date.now()`),
 * and a relative budget gains the transit time of every hop (the receiver starts counting when the header arrives),
 * so "C's budget is A's less the time spent" cannot be pinned down to the ms on the real clock. B therefore runs
 * Ballast on a FakeClock (the module's `clock` option): its handler spends {@link SPENT} ms of it before calling C, and
 * C must see A's budget less those, give or take the real time the whole call took (transit included).
 */
const PROTO = join(__dirname, '__tests__', 'chain.proto');
const HEADERS = { deadline: 'x-deadline-budget-ms', criticality: 'x-criticality', propagate: true } as const;

interface Seen {
  remaining: number;
  hasDeadline: boolean;
  level: number;
}
interface ChainService {
  call(request: object): Observable<Seen>;
  prio(request: object): Observable<Seen>;
}

/** What a hop's handler saw when it started, and when (and why) its call's signal fired. */
interface HopRecord {
  readonly hop: string;
  readonly remaining: number | undefined;
  readonly level: number;
  readonly at: number;
  readonly aborted: Deferred<{ at: number; reason: unknown }>;
}
const records: HopRecord[] = [];
/** B's Resilience clock, and what B's handler spends of it before forwarding (when `spend` is on). */
const clockB = new FakeClock();
const SPENT = 5_000;
let spend = false;
/** Every hop's handler works until its signal fires instead of answering; `cStarted`: C's has started. */
let hang = false;
let cStarted = deferred<void>();

function record(hop: string): HopRecord {
  const signal = currentSignal()!;
  const entry: HopRecord = {
    hop,
    remaining: remainingTime(),
    level: currentCriticality(),
    at: performance.now(),
    aborted: deferred(),
  };
  signal.addEventListener(
    'abort',
    () => entry.aborted.resolve({ at: performance.now(), reason: signal.reason }),
    { once: true },
  );
  records.push(entry);
  return entry;
}
const last = (hop: string) => records.filter((r) => r.hop === hop).at(-1)!;

@Controller()
class ForwardController implements OnModuleInit {
  #next!: ChainService;

  constructor(
    @Inject('NEXT') private readonly client: ClientGrpc,
    @Inject('HOP') private readonly hop: string,
  ) {}

  onModuleInit(): void {
    this.#next = this.client.getService<ChainService>('Chain');
  }

  @GrpcMethod('Chain', 'Call')
  @Resilient('plain')
  async call(): Promise<Seen> {
    const seen = record(this.hop);
    if (spend && this.hop === 'B') await clockB.advance(SPENT);
    const reply = firstValueFrom(this.#next.call({}));
    if (!hang) return reply;
    // Work of this hop's own that goes on until its call is aborted (however C's call ends first)
    reply.catch(() => undefined);
    await seen.aborted.promise;
    return reply;
  }

  /** Undecorated: the `headers` option alone binds the criticality, and the client sends it on. */
  @GrpcMethod('Chain', 'Prio')
  prio(): Promise<Seen> {
    return firstValueFrom(this.#next.prio({}));
  }
}

/** Holds C's one prioritized slot until released. */
let holding = deferred<void>();

@Controller()
class EndController {
  @GrpcMethod('Chain', 'Call')
  @Resilient('plain')
  async call(): Promise<Seen> {
    const seen = record('C');
    if (hang) {
      cStarted.resolve();
      await seen.aborted.promise;
    }
    return { remaining: seen.remaining ?? 0, hasDeadline: seen.remaining !== undefined, level: seen.level };
  }

  /** One slot, a queue of one, criticality tiers: a full queue admits a more critical arrival by displacing. */
  @GrpcMethod('Chain', 'Prio')
  @Resilient('prio')
  async prio(): Promise<Seen> {
    await holding.promise;
    return { remaining: 0, hasDeadline: false, level: currentCriticality() };
  }
}

const policies = [
  new ResiliencePolicy({ name: 'plain', strategies: [new RetryStrategy({ maxAttempts: 1 })] }),
  new ResiliencePolicy({
    name: 'prio',
    strategies: [new BulkheadStrategy({ maxConcurrency: 1, maxQueue: 1, prioritized: true })],
  }),
];

const grpcOptions = (port: number) => ({
  package: 'chain',
  protoPath: PROTO,
  url: `127.0.0.1:${port}`,
});

async function startHop(hop: string, port: number, next: number | undefined): Promise<INestMicroservice> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      ResilienceModule.forRoot({ headers: HEADERS, policies, ...(hop === 'B' ? { clock: clockB } : {}) }),
      ...(next === undefined
        ? []
        : [
            ClientsModule.register([{ name: 'NEXT', transport: Transport.GRPC, options: grpcOptions(next) }]),
          ]),
    ],
    controllers: [next === undefined ? EndController : ForwardController],
    providers: [{ provide: 'HOP', useValue: hop }],
  }).compile();
  const app = moduleRef.createNestMicroservice({
    transport: Transport.GRPC,
    options: grpcOptions(port),
    logger: false,
  });
  await app.listen();
  return app;
}

type Client = grpc.Client & Record<string, (...args: unknown[]) => grpc.ClientUnaryCall>;

function clientOf(port: number): Client {
  const definition = grpc.loadPackageDefinition(protoLoader.loadSync(PROTO)) as unknown as {
    chain: { Chain: new (url: string, creds: grpc.ChannelCredentials) => Client };
  };
  return new definition.chain.Chain(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
}

/** A unary call; `started` receives grpc-js's call object (to cancel it). */
function unary(
  client: Client,
  method: 'call' | 'prio',
  { budget, criticality }: { budget?: number; criticality?: string } = {},
  started?: (call: grpc.ClientUnaryCall) => void,
): Promise<Seen> {
  const metadata = new grpc.Metadata();
  if (criticality !== undefined) metadata.set('x-criticality', criticality);
  const options = budget === undefined ? {} : { deadline: new Date(Date.now() + budget) };
  return new Promise((resolve, reject) => {
    const call = client[method]!({}, metadata, options, (error: unknown, reply: Seen) =>
      error ? reject(error) : resolve(reply),
    );
    started?.(call);
  });
}

/**
 * Each hop rounds what is left: grpc-js writes grpc-timeout in whole ms rounded up, and reads `Date.now()` (whole
 * ms) on both ends; so each of the three hops may add up to 2 ms to the budget it passes on.
 */
const ROUNDING = 3 * 2;

describe('A → B → C over real gRPC with headers.propagate (ClientGrpc between the hops)', () => {
  const apps: INestMicroservice[] = [];
  let a: Client;
  let c: Client;
  let cApp: INestMicroservice;

  beforeAll(async () => {
    const [pa, pb, pc] = [await freePort(), await freePort(), await freePort()];
    cApp = await startHop('C', pc, undefined);
    apps.push(cApp, await startHop('B', pb, pc), await startHop('A', pa, pb));
    a = clientOf(pa);
    c = clientOf(pc);
  });
  afterAll(async () => {
    a?.close();
    c?.close();
    for (const app of apps.splice(0)) await app.close();
  });

  it('C sees A’s budget less the time spent on the way, and A’s criticality', async () => {
    const budget = 20_000;
    spend = true;
    const started = performance.now();
    const reply = await unary(a, 'call', { budget, criticality: 'critical' }).finally(() => (spend = false));
    const elapsed = performance.now() - started;
    const [atB, atC] = [last('B'), last('C')];
    expect(reply).toEqual({ remaining: atC.remaining, hasDeadline: true, level: Criticality.CRITICAL });
    expect([last('A').level, atB.level, atC.level]).toEqual([3, 3, 3]);
    expect(atB.remaining!).toBeLessThanOrEqual(budget + elapsed + ROUNDING);
    // B spent SPENT ms of its budget before calling C; everything else (handlers, transit) took `elapsed` real ms
    expect(atC.remaining!).toBeLessThanOrEqual(budget - SPENT + elapsed + ROUNDING);
    expect(atC.remaining!).toBeGreaterThanOrEqual(budget - SPENT - elapsed - ROUNDING);
    expect(atC.remaining!).toBeLessThanOrEqual(atB.remaining! - SPENT + elapsed + ROUNDING);
  });

  it('without a deadline or criticality nothing is bound anywhere on the way', async () => {
    expect(await unary(a, 'call')).toEqual({ remaining: 0, hasDeadline: false, level: Criticality.NORMAL });
    expect([last('B').remaining, last('C').remaining]).toEqual([undefined, undefined]);
  });

  it('when A’s deadline passes, B’s and C’s calls are aborted and the caller gets DEADLINE_EXCEEDED', async () => {
    hang = true;
    cStarted = deferred();
    try {
      const budget = 500;
      const started = performance.now();
      const failed = unary(a, 'call', { budget }).catch((error: { code?: number }) => error);
      await cStarted.promise;
      const [atA, atB, atC] = [last('A'), last('B'), last('C')];
      const aborts = await Promise.all([atA, atB, atC].map((r) => r.aborted.promise));
      expect(await failed).toMatchObject({ code: grpc.status.DEADLINE_EXCEEDED });
      // Each hop's own deadline (grpc-timeout) or the cancellation from upstream ends it, whichever comes first:
      // never before the deadline, and well within a second of it (a generous bound, not a performance claim).
      for (const { at, reason } of aborts) {
        expect(at - started).toBeGreaterThanOrEqual(budget - ROUNDING);
        expect(at - started).toBeLessThan(budget + 1_000);
        expect(reason).toEqual(expect.objectContaining({ name: expect.stringMatching(/Error$/) }));
      }
    } finally {
      hang = false;
    }
  });

  it('when A’s caller cancels (no deadline anywhere), the cancellation reaches B and C: their signals fire', async () => {
    hang = true;
    cStarted = deferred();
    try {
      let call!: grpc.ClientUnaryCall;
      const failed = unary(a, 'call', {}, (c) => (call = c)).catch((error: { code?: number }) => error);
      await cStarted.promise;
      const [atA, atB, atC] = [last('A'), last('B'), last('C')];
      expect([atA.remaining, atB.remaining, atC.remaining]).toEqual([undefined, undefined, undefined]);
      call.cancel();
      expect(await failed).toMatchObject({ code: grpc.status.CANCELLED });
      const aborts = await Promise.all([atA, atB, atC].map((r) => r.aborted.promise));
      for (const { reason } of aborts) expect(reason).toMatchObject({ name: 'ClientClosedRequestError' });
    } finally {
      hang = false;
    }
  });

  it('a CRITICAL chain displaces a queued BEST_EFFORT call in C’s prioritized bulkhead: criticality from two hops away decides', async () => {
    holding = deferred();
    const resilience = cApp.get(Resilience);
    const waiting = async (n: number): Promise<void> => {
      for (let i = 0; i < 20_000; i++) {
        const [state] = await resilience.admin.inspect({ policy: 'prio' });
        if ((state?.waiting ?? 0) === n && (state?.inUse ?? 0) === 1) return;
        await new Promise((resolve) => setImmediate(resolve));
      }
      throw new Error(`C's bulkhead never had ${n} waiting`);
    };
    const holder = unary(c, 'prio');
    await waiting(0);
    const bestEffort = unary(c, 'prio', { criticality: 'best_effort' }).catch((error: unknown) => error);
    await waiting(1);
    const critical = unary(a, 'prio', { criticality: 'critical' });
    // shed from the queue: UNAVAILABLE, the gRPC status of a 503
    expect(await bestEffort).toMatchObject({ code: grpc.status.UNAVAILABLE });
    holding.resolve();
    expect((await holder).level).toBe(Criticality.NORMAL);
    expect((await critical).level).toBe(Criticality.CRITICAL);
  });
});
