import type { Redis } from 'ioredis';
import { cleanUp as cleanUpRun, scanKeys, uniqueName } from '../../../../tools/jest/redis-env';

export {
  REDIS_REACHABLE,
  REDIS_REQUIRED,
  REDIS_URL,
  RUN_REDIS_TESTS,
  reportRedisUnreachable,
  connectRequired as requireRedis,
} from '../../../../tools/jest/redis-env';

/** A key prefix no other run (or concurrent test file) uses: the demo's `REDIS_PREFIX`. */
export function uniquePrefix(label: string): string {
  return uniqueName('demo', label);
}

/** Keys under `prefix`, sorted. */
export async function keysUnder(client: Redis, prefix: string): Promise<string[]> {
  return (await scanKeys(client, `${prefix}:*`)).sort();
}

/** Deletes the run's keys and disconnects. */
export function cleanUp(client: Redis | undefined, prefix: string): Promise<void> {
  return cleanUpRun(prefix, [client]);
}
