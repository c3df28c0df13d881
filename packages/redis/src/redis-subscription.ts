import { isNodeRedis, type RedisClient } from './redis-commands';

/** An ioredis connection that can receive pub/sub messages (`Redis`, a `duplicate()`, or a `Cluster`'s duplicate). */
export interface RedisSubscriberClient {
  subscribe(channel: string): Promise<unknown>;
  on(event: 'message', listener: (channel: string, message: string) => void): unknown;
  disconnect(): void;
}

/**
 * A node-redis client that can subscribe (`createClient().duplicate()`, `createCluster().duplicate()`, or a
 * `createSentinel()` client, whose pub/sub runs on a connection of its own). Connected by the store when it is not
 * open yet.
 */
export interface NodeRedisSubscriberClient {
  subscribe(channel: string, listener: (message: string, channel: string) => void): Promise<unknown>;
  unsubscribe(channel: string, listener?: (message: string, channel: string) => void): Promise<unknown>;
  connect?(): Promise<unknown>;
  readonly isOpen?: boolean;
  destroy?(): unknown;
}

export type AnySubscriberClient = RedisSubscriberClient | NodeRedisSubscriberClient;

/** node-redis clients name their pub/sub methods in camelCase (`sSubscribe`, `pSubscribe`); ioredis does not. */
const isNodeRedisSubscriber = (s: AnySubscriberClient): s is NodeRedisSubscriberClient =>
  typeof (s as { pSubscribe?: unknown }).pSubscribe === 'function';

/**
 * The default subscriber for a command client: its `duplicate()` (ioredis `Redis` and `Cluster`, node-redis client
 * and cluster), or the client itself for a node-redis Sentinel client (no `duplicate()`; its pub/sub already has a
 * connection of its own). Undefined when there is none, so the store asks for the `subscriber` option.
 */
export function defaultSubscriber(client: RedisClient): (() => AnySubscriberClient) | undefined {
  const duplicate = (client as { duplicate?: () => AnySubscriberClient }).duplicate;
  if (typeof duplicate === 'function') return () => duplicate.call(client);
  if (isNodeRedis(client) && isNodeRedisSubscriber(client as unknown as AnySubscriberClient))
    return () => client as unknown as NodeRedisSubscriberClient;
  return undefined;
}

/** A live subscription: `ready` settles when the server confirmed it; `close` ends it (idempotent). */
export interface OpenSubscription {
  readonly ready: Promise<unknown>;
  close(): void;
}

/** Subscribes `subscriber` to `channel`, whichever client family it belongs to. */
export function openSubscription(
  subscriber: AnySubscriberClient,
  channel: string,
  onMessage: (message: string) => void,
  ownsConnection: boolean,
): OpenSubscription {
  if (!isNodeRedisSubscriber(subscriber)) {
    subscriber.on('message', (from, message) => {
      if (from === channel) onMessage(message);
    });
    return { ready: subscriber.subscribe(channel), close: () => subscriber.disconnect() };
  }
  const listener = (message: string, from: string) => {
    if (from === channel) onMessage(message);
  };
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    if (ownsConnection) subscriber.destroy?.();
    else subscriber.unsubscribe(channel, listener).catch(() => undefined);
  };
  const ready = (async () => {
    if (subscriber.isOpen === false) await subscriber.connect?.();
    await subscriber.subscribe(channel, listener);
  })();
  return { ready, close };
}
