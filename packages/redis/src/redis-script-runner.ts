import { createHash } from 'node:crypto';
import { systemClock } from '@ballast/core';
import { redisCommands, type RedisClient, type RedisCommands } from './redis-commands';
import { RedisStoreError, type RedisStoreName } from './redis-store-error';

export type { RedisScriptClient } from './redis-commands';

/** A Lua script and its SHA-1, computed once at load. */
export interface LuaScript {
  readonly name: string;
  readonly source: string;
  readonly sha: string;
}

export function luaScript(name: string, source: string): LuaScript {
  return Object.freeze({ name, source, sha: createHash('sha1').update(source).digest('hex') });
}

const isNoScript = (e: unknown): boolean => e instanceof Error && e.message.startsWith('NOSCRIPT');

/**
 * Runs store scripts: EVALSHA first (the script text crosses the wire once per server), EVAL on NOSCRIPT (a
 * restarted server, a failover, a new Cluster node). Every call is bounded by `commandTimeout` through a timer race,
 * because a client with an offline queue would otherwise hold a call for as long as Redis is away; the timer is
 * cleared as soon as Redis answers. Any failure becomes a {@link RedisStoreError}.
 */
export class ScriptRunner {
  readonly #commands: RedisCommands;

  constructor(
    client: RedisClient,
    private readonly store: RedisStoreName,
    private readonly commandTimeout: number,
  ) {
    this.#commands = redisCommands(client);
  }

  async run(
    operation: string,
    script: LuaScript,
    numKeys: number,
    args: (string | number)[],
  ): Promise<unknown> {
    try {
      return await this.#bounded(operation, this.#exec(script, numKeys, args));
    } catch (e) {
      throw e instanceof RedisStoreError ? e : new RedisStoreError(this.store, operation, e, false);
    }
  }

  #exec(script: LuaScript, numKeys: number, args: (string | number)[]): Promise<unknown> {
    const keys = args.slice(0, numKeys).map(String);
    const rest = args.slice(numKeys);
    let first: Promise<unknown>;
    try {
      first = this.#commands.evalsha(script.sha, keys, rest);
    } catch (e) {
      return Promise.reject(e);
    }
    return first.catch((e: unknown) => {
      if (isNoScript(e)) return this.#commands.eval(script.source, keys, rest);
      throw e;
    });
  }

  /** Bounds any reply (a command that is not a script, such as SUBSCRIBE) by `commandTimeout`. */
  async bound(operation: string, reply: Promise<unknown>): Promise<unknown> {
    try {
      return await this.#bounded(operation, reply);
    } catch (e) {
      throw e instanceof RedisStoreError ? e : new RedisStoreError(this.store, operation, e, false);
    }
  }

  #bounded(operation: string, reply: Promise<unknown>): Promise<unknown> {
    const ms = this.commandTimeout;
    if (!(ms > 0 && ms < Infinity)) return reply;
    return new Promise((resolve, reject) => {
      // core's system clock, not a bare setTimeout: Node holds a timer delay in 32 bits, so a commandTimeout past
      // ~24.8 days ('600h') would fire after 1 ms and fail every command; the clock chains timers for such delays
      // (and unrefs them).
      const timer = systemClock.setTimeout(
        () => reject(new RedisStoreError(this.store, operation, undefined, true)),
        ms,
      );
      reply.then(
        (value) => {
          systemClock.clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          systemClock.clearTimeout(timer);
          reject(error);
        },
      );
    });
  }
}
