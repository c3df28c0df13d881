// @ballast/redis — fleet-wide breaker, rate-limit and latency-digest state on Redis (SPEC §7).
export { redisCircuitBreakerStore, RedisCircuitBreakerStore } from './redis-circuit-breaker-store';
export type { RedisCircuitBreakerStoreOptions } from './redis-circuit-breaker-store';
export { redisRateLimitStore, RedisRateLimitStore } from './redis-rate-limit-store';
export type { RedisRateLimitStoreOptions } from './redis-rate-limit-store';
export { redisLatencyDigestStore, RedisLatencyDigestStore } from './redis-latency-digest-store';
export type { RedisLatencyDigestStoreOptions } from './redis-latency-digest-store';
export { redisControlStore, RedisControlStore } from './redis-control-store';
export type {
  NodeRedisSubscriberClient,
  RedisControlStoreOptions,
  RedisPubSubMode,
  RedisSubscriberClient,
} from './redis-control-store';
export { RedisStoreError, isRedisStoreError } from './redis-store-error';
export type { RedisStoreName } from './redis-store-error';
export type { NodeRedisClient, NodeRedisScriptArgs, RedisClient, RedisScriptClient } from './redis-commands';
export type { RedisStoreOptions } from './redis-store-options';
