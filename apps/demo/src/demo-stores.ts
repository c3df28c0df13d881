import {
  Inject,
  Injectable,
  Logger,
  Module,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import type { ResilienceStores } from '@ballast/core';
import { redisCircuitBreakerStore, redisLatencyDigestStore, redisRateLimitStore } from '@ballast/redis';
import { Redis } from 'ioredis';
import { DemoConfig } from './demo-config';

/** The stores handed to `ResilienceModule`, and a description for the start-up banner. */
@Injectable()
export class DemoStores implements OnModuleInit, OnApplicationShutdown {
  readonly stores: ResilienceStores | undefined;
  readonly description: string;
  readonly #redis: Redis | undefined;

  constructor(@Inject(DemoConfig) config: DemoConfig) {
    if (config.redisUrl === undefined) {
      this.description = 'in-memory stores';
      this.stores = undefined;
      return;
    }
    // One connection serves all three stores; every state change is a single Lua script on the server.
    // While Redis is unreachable a command fails at once instead of waiting in ioredis' offline queue (every
    // request would wait the stores' command timeout): the policy's failOpenOnStoreError decides.
    const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
    redis.on('error', (error: Error) => new Logger('Redis').warn(`${error.message} (Ballast fails open)`));
    this.#redis = redis;
    this.stores = {
      circuitBreaker: redisCircuitBreakerStore(redis),
      rateLimit: redisRateLimitStore(redis),
      latencyDigest: redisLatencyDigestStore(redis),
    };
    this.description = `Redis stores at ${redactUrl(config.redisUrl)}`;
  }

  /**
   * Waits (at most 2 s) for the first connection, so the first requests are not failed open merely because it is
   * still being made: without the offline queue, a command sent before the connection is ready fails at once.
   */
  async onModuleInit(): Promise<void> {
    const redis = this.#redis;
    if (redis === undefined || redis.status === 'ready') return;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        redis.off('ready', done);
        resolve();
      };
      const timer = setTimeout(done, 2000);
      redis.once('ready', done);
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.#redis?.quit().catch(() => this.#redis?.disconnect());
  }
}

function redactUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}

@Module({ providers: [DemoStores], exports: [DemoStores] })
export class DemoStoresModule {}
