import { REDIS_URL, connectRequired, uniqueName } from '../../../../tools/jest/redis-env';

export {
  REDIS_REACHABLE,
  REDIS_REQUIRED,
  REDIS_URL,
  RUN_REDIS_TESTS,
  reportRedisUnreachable,
} from '../../../../tools/jest/redis-env';

/** Host and port of {@link REDIS_URL}, as Nest's Redis transport takes them. */
export function redisHostPort(): { host: string; port: number } {
  const url = new URL(REDIS_URL);
  return { host: url.hostname, port: Number(url.port || 6379) };
}

/** A channel prefix no other run (or concurrent test file) uses. */
export function uniqueChannelPrefix(label: string): string {
  return uniqueName('nest', label);
}

/** Fails fast with a clear message when Redis does not answer (in CI, where the Redis tests are required). */
export async function requireRedis(): Promise<void> {
  (await connectRequired()).disconnect();
}
