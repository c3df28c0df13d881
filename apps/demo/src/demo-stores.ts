import {
  Inject,
  Injectable,
  Logger,
  Module,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import type { ResilienceStores } from '@ballast/core';
import {
  redisCircuitBreakerStore,
  redisControlStore,
  redisLatencyDigestStore,
  redisRateLimitStore,
} from '@ballast/redis';
import { Redis } from 'ioredis';
import { DemoConfig } from './demo-config';

/** The stores handed to `ResilienceModule`, and a description for the start-up banner. */
@Injectable()
export class DemoStores implements OnModuleInit, OnApplicationShutdown {
  readonly stores: ResilienceStores | undefined;
  #description: string;
  readonly #redis: Redis | undefined;
  readonly #logger = new Logger('Redis');
  /** The connection's last error while it is down; `undefined` while connected (or not yet tried). */
  #down: string | undefined;

  constructor(@Inject(DemoConfig) config: DemoConfig) {
    if (config.redisUrl === undefined) {
      this.#description = 'in-memory stores';
      this.stores = undefined;
      return;
    }
    // One connection serves all three stores; every state change is a single Lua script on the server.
    // While Redis is unreachable a command fails at once instead of waiting in ioredis' offline queue (every
    // request would wait the stores' command timeout): the policy's failOpenOnStoreError decides.
    // disconnectTimeout: on a connection that is already gone, ioredis' disconnect() still armed a 2 s timer
    // waiting for it to close, keeping a stopping process alive that long.
    const redis = new Redis(config.redisUrl, {
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      disconnectTimeout: 100,
    });
    // ioredis reconnects every ≤ 2 s and reports every failed attempt: say so once per outage, and when it is over.
    redis.on('error', (error: Error) => {
      if (this.#down === undefined)
        this.#logger.warn(
          `${redactUrl(config.redisUrl!)} unreachable (${error.message}): Ballast fails open on local state until it reconnects`,
        );
      this.#down = error.message;
    });
    redis.on('ready', () => {
      if (this.#down !== undefined) this.#logger.warn(`${redactUrl(config.redisUrl!)} reconnected`);
      this.#down = undefined;
    });
    this.#redis = redis;
    const options = { prefix: config.redisPrefix };
    this.stores = {
      circuitBreaker: redisCircuitBreakerStore(redis, options),
      rateLimit: redisRateLimitStore(redis, options),
      latencyDigest: redisLatencyDigestStore(redis, options),
      // Operator actions (force-open, retune, reset) reach every replica; pub/sub needs a connection of its own,
      // which may queue its SUBSCRIBE until it connects.
      control: redisControlStore(redis, {
        ...options,
        subscriber: () => {
          const subscriber = redis.duplicate({ enableOfflineQueue: true });
          subscriber.on('error', () => {}); // the command connection reports outages
          return subscriber;
        },
      }),
    };
    this.#description = `Redis stores at ${redactUrl(config.redisUrl)}${
      config.redisPrefix === 'ballast' ? '' : `, keys '${config.redisPrefix}:*'`
    }`;
  }

  /** For the start-up banner: where the state lives, and whether Redis answered at start. */
  get description(): string {
    return this.#down === undefined
      ? this.#description
      : `${this.#description} — UNREACHABLE (${this.#down}), failing open on local state until it connects`;
  }

  /**
   * Waits (at most 2 s) for the first connection, so the first requests are not failed open merely because it is
   * still being made: without the offline queue, a command sent before the connection is ready fails at once. A
   * refused connection ends the wait at once: Redis is not there, and the banner says so.
   */
  async onModuleInit(): Promise<void> {
    await this.connected();
  }

  /** The stores, once the first connection is made (or has failed, or 2 s have passed). */
  async connected(): Promise<ResilienceStores | undefined> {
    await this.#firstConnection();
    return this.stores;
  }

  async #firstConnection(): Promise<void> {
    const redis = this.#redis;
    if (redis === undefined || redis.status === 'ready') return;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        redis.off('ready', done);
        redis.off('error', done);
        resolve();
      };
      const timer = setTimeout(done, 2000);
      redis.once('ready', done);
      redis.once('error', done);
    });
  }

  async onApplicationShutdown(): Promise<void> {
    const redis = this.#redis;
    if (redis === undefined) return;
    // quit() would wait for a connection that may never come back: only a ready client says goodbye.
    if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
    else redis.disconnect();
  }
}

function redactUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}

@Module({ providers: [DemoStores], exports: [DemoStores] })
export class DemoStoresModule {}
