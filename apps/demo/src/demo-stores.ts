import { Inject, Injectable, Logger, Module, type OnApplicationShutdown } from '@nestjs/common';
import type { ResilienceStores } from '@ballast/core';
import { redisCircuitBreakerStore, redisLatencyDigestStore, redisRateLimitStore } from '@ballast/redis';
import { Redis } from 'ioredis';
import { DemoConfig } from './demo-config';

/** The stores handed to `ResilienceModule`, and a description for the start-up banner. */
@Injectable()
export class DemoStores implements OnApplicationShutdown {
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
    // A command waits at most one reconnect attempt, then fails: the policy's failOpenOnStoreError decides.
    const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 1 });
    redis.on('error', (error: Error) => new Logger('Redis').warn(`${error.message} (Ballast fails open)`));
    this.#redis = redis;
    this.stores = {
      circuitBreaker: redisCircuitBreakerStore(redis),
      rateLimit: redisRateLimitStore(redis),
      latencyDigest: redisLatencyDigestStore(redis),
    };
    this.description = `Redis stores at ${redactUrl(config.redisUrl)}`;
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
