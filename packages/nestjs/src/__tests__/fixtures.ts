import {
  Controller,
  Get,
  Inject,
  Injectable,
  NotFoundException,
  ServiceUnavailableException,
  type ModuleMetadata,
} from '@nestjs/common';
import {
  BulkheadStrategy,
  CircuitBreakerStrategy,
  HedgeStrategy,
  RateLimitStrategy,
  ResiliencePolicy,
  RetryStrategy,
  TimeoutStrategy,
  currentCriticality,
  currentSignal,
  remainingTime,
} from '@ballast/core';
import { FakeClock } from '@ballast/testing';
import { defer, of, throwError, type Observable } from 'rxjs';
import { CallSignal, Criticality, Hedged, Resilient, ResilienceModule } from '../index';
import type { ResilienceModuleOptions } from '../index';
import { deferred, type Deferred } from './harness';

export const CLOCK = Symbol('test clock');

/** Fresh policies per app (a policy is immutable, but fresh ones keep each test's intent visible). */
export function testPolicies(): ResiliencePolicy[] {
  return [
    new ResiliencePolicy({ name: 'limited', strategies: [new RateLimitStrategy({ permits: 2, per: '1m' })] }),
    new ResiliencePolicy({
      name: 'guarded',
      strategies: [
        new CircuitBreakerStrategy({
          failureRatio: 0.5,
          samplingWindow: '10s',
          minThroughput: 2,
          breakDuration: '5s',
        }),
      ],
    }),
    new ResiliencePolicy({ name: 'slow', strategies: [new TimeoutStrategy({ timeout: '1s' })] }),
    new ResiliencePolicy({
      name: 'retrying',
      strategies: [new RetryStrategy({ maxAttempts: 3, backoff: { base: 10, max: 10, jitter: 'none' } })],
    }),
    new ResiliencePolicy({ name: 'narrow', strategies: [new BulkheadStrategy({ maxConcurrency: 1 })] }),
    new ResiliencePolicy({
      name: 'queued',
      strategies: [
        new BulkheadStrategy({ maxConcurrency: 1, maxQueue: 1, queueTarget: 10, queueInterval: 100 }),
      ],
    }),
    new ResiliencePolicy({
      name: 'hedged',
      strategies: [],
      hedge: new HedgeStrategy({ delay: 100, maxAttempts: 2 }),
    }),
    new ResiliencePolicy({ name: 'plain', strategies: [] }),
  ];
}

/** Test-side observations and levers shared by the fixture handlers. */
@Injectable()
export class Probe {
  readonly hits = new Map<string, number>();
  readonly signals: (AbortSignal | undefined)[] = [];
  entered: Deferred<void> = deferred();
  release: Deferred<void> = deferred();
  failing = true;

  hit(name: string): number {
    const n = (this.hits.get(name) ?? 0) + 1;
    this.hits.set(name, n);
    return n;
  }
}

/** Resolves when `signal` aborts; never otherwise (a handler that honours its signal). */
function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) =>
    signal.addEventListener('abort', () => reject(signal.reason), { once: true }),
  );
}

@Controller('m')
export class MethodController {
  constructor(
    private readonly probe: Probe,
    @Inject(CLOCK) private readonly clock: FakeClock,
  ) {}

  @Get('limited')
  @Resilient('limited')
  limited(): { ok: true } {
    return { ok: true };
  }

  @Get('route-a')
  @Resilient('limited', { route: 'a' })
  routeA(): { route: string } {
    return { route: 'a' };
  }

  @Get('route-b')
  @Resilient('limited', { route: 'b' })
  routeB(): { route: string } {
    return { route: 'b' };
  }

  @Get('undecorated')
  undecorated(): { ok: true } {
    return { ok: true };
  }

  @Get('flaky')
  @Resilient('guarded')
  flaky(): { ok: true } {
    this.probe.hit('flaky');
    if (this.probe.failing) throw new ServiceUnavailableException('backend down');
    return { ok: true };
  }

  @Get('missing')
  @Resilient('guarded')
  missing(): never {
    throw new NotFoundException('no such product');
  }

  @Get('slow')
  @Resilient('slow')
  async slow(): Promise<{ ok: true }> {
    const signal = currentSignal()!;
    this.probe.signals.push(signal);
    this.probe.entered.resolve();
    await this.clock.sleep(5000, signal);
    return { ok: true };
  }

  @Get('retry')
  @Resilient('retrying')
  retry(): { attempts: number } {
    const n = this.probe.hit('retry');
    if (n < 3) throw new ServiceUnavailableException();
    return { attempts: n };
  }

  @Get('observable')
  @Resilient('retrying')
  observable(): Observable<{ attempts: number }> {
    return defer(() => {
      const n = this.probe.hit('observable');
      return n < 2 ? throwError(() => new ServiceUnavailableException()) : of({ attempts: n });
    });
  }

  @Get('narrow')
  @Resilient('narrow')
  async narrow(): Promise<{ ok: true }> {
    this.probe.hit('narrow');
    this.probe.entered.resolve();
    await this.probe.release.promise;
    return { ok: true };
  }

  @Get('queued')
  @Resilient('queued')
  async queued(): Promise<{ ok: true }> {
    this.probe.hit('queued');
    this.probe.entered.resolve();
    await this.probe.release.promise;
    return { ok: true };
  }

  @Get('hedged')
  @Hedged('hedged')
  async hedged(@CallSignal() signal: AbortSignal): Promise<{ attempt: number }> {
    const n = this.probe.hit('hedged');
    this.probe.signals.push(signal);
    if (n === 1) {
      this.probe.entered.resolve();
      await untilAborted(signal);
    }
    return { attempt: n };
  }

  @Get('not-hedged')
  @Resilient('hedged')
  async notHedged(): Promise<{ attempt: number }> {
    const n = this.probe.hit('not-hedged');
    this.probe.entered.resolve();
    await this.clock.sleep(500);
    return { attempt: n };
  }

  @Get('context')
  @Resilient('plain')
  @Criticality(Criticality.CRITICAL)
  context(): { criticality: number; remaining: number | null } {
    return { criticality: currentCriticality(), remaining: remainingTime() ?? null };
  }

  @Get('context-undecorated')
  contextUndecorated(): { criticality: number; remaining: number | null } {
    return { criticality: currentCriticality(), remaining: remainingTime() ?? null };
  }

  @Get('deadline')
  @Resilient('plain')
  async deadline(): Promise<{ ok: true }> {
    const signal = currentSignal()!;
    this.probe.signals.push(signal);
    this.probe.entered.resolve();
    await this.clock.sleep(5000, signal);
    return { ok: true };
  }
}

@Controller('c')
@Resilient('limited', { route: 'class' })
export class ClassController {
  @Get('inherits')
  inherits(): { ok: true } {
    return { ok: true };
  }

  @Get('overrides')
  @Resilient('plain')
  overrides(): { ok: true } {
    return { ok: true };
  }
}

/** The module of the HTTP suites: both controllers, a FakeClock, and any option overrides. */
export function httpTestModule(
  clock: FakeClock,
  options: Partial<ResilienceModuleOptions> = {},
): ModuleMetadata {
  return {
    imports: [ResilienceModule.forRoot({ policies: testPolicies(), clock, ...options })],
    controllers: [MethodController, ClassController],
    providers: [Probe, { provide: CLOCK, useValue: clock }],
  };
}
