import { isNodeRedis, type RedisClient } from './redis-commands';

/**
 * How notices travel: `classic` PUBLISH/SUBSCRIBE, which Redis Cluster forwards to every node; or `sharded`
 * SPUBLISH/SSUBSCRIBE (Redis ≥ 7), which stays on the shard that owns the channel's slot.
 */
export type RedisPubSubMode = 'classic' | 'sharded';

/**
 * An ioredis connection that can receive pub/sub messages (`Redis`, a `duplicate()`, or a `Cluster`'s duplicate).
 * Sharded notices need `ssubscribe` and the `smessage` event (and, on a `Cluster`, `shardedSubscribers: true`).
 */
export interface RedisSubscriberClient {
  subscribe(channel: string): Promise<unknown>;
  ssubscribe?(channel: string): Promise<unknown>;
  on(event: 'message' | 'smessage', listener: (channel: string, message: string) => void): unknown;
  disconnect(): void;
}

type NodeRedisListener = (message: string, channel: string) => void;

/**
 * A node-redis client that can subscribe (`createClient().duplicate()`, `createCluster().duplicate()`, or a
 * `createSentinel()` client, whose pub/sub runs on a connection of its own). Connected by the store when it is not
 * open yet. Sharded notices need `sSubscribe`.
 */
export interface NodeRedisSubscriberClient {
  subscribe(channel: string, listener: NodeRedisListener): Promise<unknown>;
  unsubscribe(channel: string, listener?: NodeRedisListener): Promise<unknown>;
  sSubscribe?(channel: string, listener: NodeRedisListener): Promise<unknown>;
  sUnsubscribe?(channel: string, listener?: NodeRedisListener): Promise<unknown>;
  connect?(): Promise<unknown>;
  readonly isOpen?: boolean;
  destroy?(): unknown;
}

export type AnySubscriberClient = RedisSubscriberClient | NodeRedisSubscriberClient;

/** node-redis clients name their pub/sub methods in camelCase (`sSubscribe`, `pSubscribe`); ioredis does not. */
const isNodeRedisSubscriber = (s: AnySubscriberClient): s is NodeRedisSubscriberClient =>
  typeof (s as { pSubscribe?: unknown }).pSubscribe === 'function';

/** An ioredis `Cluster` says so (`isCluster`); its sharded subscriber must be told to keep one connection per shard. */
const isIoredisCluster = (c: unknown): boolean => (c as { isCluster?: unknown }).isCluster === true;

/**
 * The default subscriber for a command client: its `duplicate()` (ioredis `Redis` and `Cluster`, node-redis client
 * and cluster), or the client itself for a node-redis Sentinel client (no `duplicate()`; its pub/sub already has a
 * connection of its own). In sharded mode an ioredis `Cluster` is duplicated with `shardedSubscribers: true`, so
 * SSUBSCRIBE goes to the shard that owns the channel (otherwise it goes to one node, which answers MOVED). Undefined
 * when there is none, so the store asks for the `subscriber` option.
 */
export function defaultSubscriber(
  client: RedisClient,
  mode: RedisPubSubMode,
): (() => AnySubscriberClient) | undefined {
  const duplicate = (client as { duplicate?: (...args: unknown[]) => AnySubscriberClient }).duplicate;
  if (typeof duplicate === 'function')
    return mode === 'sharded' && isIoredisCluster(client)
      ? () => duplicate.call(client, [], { shardedSubscribers: true })
      : () => duplicate.call(client);
  if (isNodeRedis(client) && isNodeRedisSubscriber(client as unknown as AnySubscriberClient))
    return () => client as unknown as NodeRedisSubscriberClient;
  return undefined;
}

/** A live subscription: `ready` settles when the server confirmed it; `close` ends it (idempotent). */
export interface OpenSubscription {
  readonly ready: Promise<unknown>;
  close(): void;
}

const noSharded = (): Promise<never> =>
  Promise.reject(new Error("the subscriber cannot SSUBSCRIBE (pubsub: 'sharded' needs a client that can)"));

/** Subscribes `subscriber` to `channel` (SUBSCRIBE, or SSUBSCRIBE when sharded), whichever client family it is. */
export function openSubscription(
  subscriber: AnySubscriberClient,
  channel: string,
  onMessage: (message: string) => void,
  ownsConnection: boolean,
  mode: RedisPubSubMode = 'classic',
): OpenSubscription {
  const sharded = mode === 'sharded';
  const errors = ownsConnection ? reportErrors(subscriber, channel) : undefined;
  if (!isNodeRedisSubscriber(subscriber)) {
    subscriber.on(sharded ? 'smessage' : 'message', (from, message) => {
      if (from !== channel) return;
      errors?.heard();
      onMessage(message);
    });
    const ready = !sharded
      ? subscriber.subscribe(channel)
      : typeof subscriber.ssubscribe === 'function'
        ? subscriber.ssubscribe(channel)
        : noSharded();
    return { ready, close: () => subscriber.disconnect() };
  }
  const listener: NodeRedisListener = (message, from) => {
    if (from !== channel) return;
    errors?.heard();
    onMessage(message);
  };
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    if (ownsConnection) subscriber.destroy?.();
    else if (sharded) subscriber.sUnsubscribe?.(channel, listener).catch(() => undefined);
    else subscriber.unsubscribe(channel, listener).catch(() => undefined);
  };
  const ready = (async () => {
    if (subscriber.isOpen === false) await subscriber.connect?.();
    if (!sharded) await subscriber.subscribe(channel, listener);
    else if (typeof subscriber.sSubscribe === 'function') await subscriber.sSubscribe(channel, listener);
    else await noSharded();
  })();
  return { ready, close };
}

/**
 * A connection the store opened (or was handed to own) must not leave its errors to the client's default: an
 * `'error'` event nobody listens to throws (node-redis: the process dies the first time Redis goes away), and
 * ioredis prints each one to stderr. One warning per outage: the next notice heard re-arms it. A connection that
 * already has an `'error'` listener (a user's own `subscriber`) is left to it.
 */
function reportErrors(subscriber: AnySubscriberClient, channel: string): { heard(): void } | undefined {
  const emitter = subscriber as unknown as {
    on?(event: 'error', listener: (error: unknown) => void): unknown;
    listenerCount?(event: string): number;
  };
  if (typeof emitter.on !== 'function' || (emitter.listenerCount?.('error') ?? 0) > 0) return undefined;
  let warned = false;
  emitter.on('error', (error: unknown) => {
    if (warned) return;
    warned = true;
    const reason = error instanceof Error ? error.message : String(error);
    process.emitWarning(
      `Ballast: the control store's subscriber connection (${channel}) failed: ${reason}. Notices resume when it ` +
        'reconnects; the reconcile applies what was missed meanwhile.',
      'BallastControlWarning',
    );
  });
  return {
    heard: () => {
      warned = false;
    },
  };
}
