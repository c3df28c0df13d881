import { createHash } from 'node:crypto';
import { systemClock } from '@ballast/core';
import { RedisStoreError, type RedisStoreName } from './redis-store-error';

/**
 * The part of an ioredis client the stores use: `Redis` (standalone or Sentinel) and `Cluster` both fit, and so
 * does any client with the same two methods. Typed structurally so this package never pins a client class.
 */
export interface RedisScriptClient {
  evalsha(sha1: string, numkeys: number, ...args: (string | number)[]): Promise<unknown>;
  eval(script: string, numkeys: number, ...args: (string | number)[]): Promise<unknown>;
}

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
  constructor(
    private readonly client: RedisScriptClient,
    private readonly store: RedisStoreName,
    private readonly commandTimeout: number,
  ) {}

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
    let first: Promise<unknown>;
    try {
      first = this.client.evalsha(script.sha, numKeys, ...args);
    } catch (e) {
      return Promise.reject(e);
    }
    return first.catch((e: unknown) => {
      if (isNoScript(e)) return this.client.eval(script.source, numKeys, ...args);
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
