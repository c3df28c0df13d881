import { randomBytes } from 'node:crypto';
import { Global, Module } from '@nestjs/common';
import { systemClock, type Clock, type Random } from '@ballast/core';

/** Settings read once from the environment; tests override the whole provider. */
export class DemoConfig {
  /** Bearer token of the admin API: `ADMIN_TOKEN`, or a fresh random one printed at start. */
  readonly adminToken: string;
  /** `REDIS_URL` switches breaker, rate-limit and latency state to Redis (shared by every replica). */
  readonly redisUrl: string | undefined;
  /** `REDIS_PREFIX`: first segment of every Redis key (default `ballast`), to share one Redis between fleets. */
  readonly redisPrefix: string;

  constructor(env: NodeJS.ProcessEnv = process.env) {
    this.adminToken = env['ADMIN_TOKEN'] || randomBytes(16).toString('hex');
    this.redisUrl = env['REDIS_URL'] || undefined;
    this.redisPrefix = env['REDIS_PREFIX'] || 'ballast';
  }
}

/** The demo's time and randomness: real by default, a FakeClock and a seeded random in tests. */
export const DEMO_CLOCK = Symbol('demo clock');
export const DEMO_RANDOM = Symbol('demo random');

@Global()
@Module({
  providers: [
    { provide: DemoConfig, useFactory: () => new DemoConfig() },
    { provide: DEMO_CLOCK, useValue: systemClock satisfies Clock },
    { provide: DEMO_RANDOM, useValue: Math.random satisfies Random },
  ],
  exports: [DemoConfig, DEMO_CLOCK, DEMO_RANDOM],
})
export class DemoConfigModule {}
