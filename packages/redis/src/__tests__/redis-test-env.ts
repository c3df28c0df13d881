import { Redis } from 'ioredis';
import { REDIS_URL, uniqueName } from '../../../../tools/jest/redis-env';

export {
  REDIS_REACHABLE,
  REDIS_REQUIRED,
  REDIS_URL,
  RUN_REDIS_TESTS,
  cleanUp,
  deleteKeys,
  reportRedisUnreachable,
  requireRedis,
  scanKeys,
} from '../../../../tools/jest/redis-env';

/** A prefix no other run (or concurrent test file) uses; its keys are deleted by `deleteKeys`. */
export function uniquePrefix(label: string): string {
  return uniqueName('test', label);
}

export function newClient(
  url = REDIS_URL,
  options: { enableOfflineQueue?: boolean; lazyConnect?: boolean } = {},
): Redis {
  const client = new Redis(url, { maxRetriesPerRequest: 1, connectTimeout: 2000, ...options });
  client.on('error', () => {}); // failures surface through the stores' typed errors
  return client;
}
