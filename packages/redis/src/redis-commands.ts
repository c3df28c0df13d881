/**
 * The few commands the stores send, behind one small port, so a store never knows which client it holds. Two client
 * families fit, both typed structurally (this package imports neither at run time, so neither is required):
 * - ioredis (`Redis` standalone or Sentinel-backed, `Cluster`): `evalsha(sha, numKeys, ...keysAndArgs)`;
 * - node-redis, the `redis` package 5 and 6 (`createClient`, `createCluster`, `createSentinel`):
 *   `evalSha(sha, { keys, arguments })`.
 * Either client routes a script by its first key (Cluster: MOVED and ASK are the client's business), and every
 * script's keys share one hash tag, so a script never spans two slots.
 */

/** What an ioredis client offers (`Redis`, a Sentinel-backed `Redis`, `Cluster`), or any client shaped like it. */
export interface RedisScriptClient {
  evalsha(sha1: string, numkeys: number, ...args: (string | number)[]): Promise<unknown>;
  eval(script: string, numkeys: number, ...args: (string | number)[]): Promise<unknown>;
}

/** Keys and arguments of a node-redis script call. */
export interface NodeRedisScriptArgs {
  keys: string[];
  arguments: string[];
}

/**
 * What a node-redis client offers (`createClient()`, `createCluster()`, `createSentinel()` of the `redis` package 5
 * or 6), typed structurally. Connect it (`await client.connect()`) before the first call, as node-redis requires.
 */
export interface NodeRedisClient {
  evalSha(sha1: string, options: NodeRedisScriptArgs): Promise<unknown>;
  eval(script: string, options: NodeRedisScriptArgs): Promise<unknown>;
}

/** Any client the stores take: ioredis or node-redis. */
export type RedisClient = RedisScriptClient | NodeRedisClient;

/** How the stores call scripts, whichever client is underneath. */
export interface RedisCommands {
  evalsha(sha1: string, keys: string[], args: (string | number)[]): Promise<unknown>;
  eval(script: string, keys: string[], args: (string | number)[]): Promise<unknown>;
}

export const isNodeRedis = (client: RedisClient): client is NodeRedisClient =>
  typeof (client as Partial<NodeRedisClient>).evalSha === 'function' &&
  typeof (client as Partial<RedisScriptClient>).evalsha !== 'function';

/** The command port over either client. */
export function redisCommands(client: RedisClient): RedisCommands {
  if (isNodeRedis(client)) {
    // node-redis takes string arguments only.
    const call = (args: (string | number)[]): string[] => args.map(String);
    return {
      evalsha: (sha, keys, args) => client.evalSha(sha, { keys, arguments: call(args) }),
      eval: (script, keys, args) => client.eval(script, { keys, arguments: call(args) }),
    };
  }
  return {
    evalsha: (sha, keys, args) => client.evalsha(sha, keys.length, ...keys, ...args),
    eval: (script, keys, args) => client.eval(script, keys.length, ...keys, ...args),
  };
}
