import 'reflect-metadata';
import { Controller, Get, Injectable } from '@nestjs/common';
import { Int, Resolver, Subscription } from '@nestjs/graphql';
import { Test } from '@nestjs/testing';
import {
  BulkheadStrategy,
  Criticality as Level,
  ResiliencePolicy,
  currentCriticality,
  isResilienceError,
} from '@ballast/core';
import { bootstrapError } from './__tests__/harness';
import { Criticality, Resilient, ResilienceModule } from './index';

const policies = (): ResiliencePolicy[] => [
  new ResiliencePolicy({
    name: 'shared',
    strategies: [new BulkheadStrategy({ maxConcurrency: 1, maxQueue: 1, prioritized: true })],
  }),
];

/** Provider methods: Nest runs no interceptor around them, so the explorer binds their level itself. */
@Injectable()
class ReportsClient {
  @Criticality('BEST_EFFORT')
  async prefetch(): Promise<number> {
    await Promise.resolve();
    return currentCriticality();
  }

  @Criticality(Level.CRITICAL)
  @Resilient('shared')
  async checkout(): Promise<number> {
    await Promise.resolve();
    return currentCriticality();
  }

  plain(): number {
    return currentCriticality();
  }
}

describe('@Criticality on provider methods', () => {
  it('binds the level for everything the method awaits, with or without @Resilient', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [ResilienceModule.forRoot({ policies: policies() })],
      providers: [ReportsClient],
    }).compile();
    await moduleRef.init();
    try {
      const client = moduleRef.get(ReportsClient);
      expect(await client.prefetch()).toBe(Level.BEST_EFFORT);
      expect(await client.checkout()).toBe(Level.CRITICAL);
      expect(client.plain()).toBe(Level.NORMAL);
    } finally {
      await moduleRef.close();
    }
  });

  it('with @Resilient, the policy sees the level: a CRITICAL call displaces a queued BEST_EFFORT one', async () => {
    @Injectable()
    class Gate {
      release!: () => void;
      @Resilient('shared')
      async hold(): Promise<string> {
        await new Promise<void>((resolve) => (this.release = resolve));
        return 'held';
      }
      @Criticality('BEST_EFFORT')
      @Resilient('shared')
      async background(): Promise<string> {
        return 'background';
      }
      @Criticality('CRITICAL')
      @Resilient('shared')
      async urgent(): Promise<string> {
        return 'urgent';
      }
    }
    const moduleRef = await Test.createTestingModule({
      imports: [ResilienceModule.forRoot({ policies: policies() })],
      providers: [Gate],
    }).compile();
    await moduleRef.init();
    try {
      const gate = moduleRef.get(Gate);
      const held = gate.hold(); // takes the only slot
      await Promise.resolve();
      const background = gate.background().catch((e: unknown) => e); // queued
      const urgent = gate.urgent(); // the queue is full: displaces the less critical waiter
      const displaced = await background;
      expect(isResilienceError(displaced) && displaced.code).toBe('bulkhead_queue_shed');
      gate.release();
      expect(await held).toBe('held');
      expect(await urgent).toBe('urgent');
    } finally {
      await moduleRef.close();
    }
  });

  it('refuses @Criticality on a controller method that is not a handler, which would do nothing', async () => {
    @Controller('reports')
    class ReportsController {
      @Get()
      list(): number {
        return this.level();
      }
      @Criticality('CRITICAL')
      level(): number {
        return currentCriticality();
      }
    }
    const error = await bootstrapError({
      imports: [ResilienceModule.forRoot({ policies: policies() })],
      controllers: [ReportsController],
    });
    expect(isResilienceError(error) && error.message).toContain(
      'ReportsController.level: @Criticality on a controller method that is not a route or message handler does nothing',
    );
  });

  it('accepts @Criticality on a resolver class whose only methods are subscriptions (the interceptor binds it)', async () => {
    @Criticality('CRITICAL')
    @Resolver()
    class Ticks {
      @Subscription(() => Int)
      ticks(): AsyncIterable<number> {
        return (async function* () {})();
      }
    }
    const error = await bootstrapError({
      imports: [ResilienceModule.forRoot({ policies: policies() })],
      providers: [Ticks],
    });
    expect(error).toBeUndefined();
  });

  it('refuses @Criticality on a provider class, which would do nothing', async () => {
    @Criticality('CRITICAL')
    @Injectable()
    class Everything {
      async work(): Promise<void> {}
    }
    const error = await bootstrapError({
      imports: [ResilienceModule.forRoot({ policies: policies() })],
      providers: [Everything],
    });
    expect(isResilienceError(error) && error.message).toContain(
      'Everything: @Criticality on a provider class is not supported; decorate its methods',
    );
  });
});
