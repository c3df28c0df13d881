import {
  stateKey,
  type AuditEntry,
  type ControlChange,
  type ControlState,
  type ControlStore,
  type ControlSubscription,
  type ControlWriteResult,
  type ForcedOverride,
  type ReplicaInfo,
  type ReplicaRecord,
  type PolicySetting,
  type ResetRecord,
  type RetunedPolicy,
  type SettingAction,
} from '@ballast/core';
import {
  CONTROL_AUDIT,
  CONTROL_HEARTBEAT,
  CONTROL_LEAVE,
  CONTROL_READ,
  CONTROL_RECORD,
  CONTROL_REPLICAS,
  CONTROL_SEQ,
  CONTROL_WRITE,
} from './lua/control-scripts';
import type { RedisClient } from './redis-commands';
import { ScriptRunner } from './redis-script-runner';
import { RedisStoreError } from './redis-store-error';
import {
  OptionCheck,
  clockArg,
  resolveRedisStoreOptions,
  type RedisStoreOptions,
  type ResolvedRedisStoreOptions,
} from './redis-store-options';
import { parseJson, parseNotice, warnOnce } from './control-wire';
import {
  defaultSubscriber,
  openSubscription,
  type AnySubscriberClient,
  type RedisPubSubMode,
} from './redis-subscription';

export type { NodeRedisSubscriberClient, RedisPubSubMode, RedisSubscriberClient } from './redis-subscription';

export interface RedisControlStoreOptions extends RedisStoreOptions {
  /** ms between each replica's reconcile (one `seq` read; the whole state only when it moved). Default 1 s. */
  readonly reconcileInterval?: RedisStoreOptions['keyTtl'];
  /** ms between heartbeats; a replica is listed for three of them. Default 5 s. */
  readonly heartbeatInterval?: RedisStoreOptions['keyTtl'];
  /** Audit entries kept (approximately: the stream is trimmed with `MAXLEN ~`). Default 1000. */
  readonly maxAudit?: number;
  /**
   * Opens the connection that receives notices (pub/sub needs a connection of its own). Default: the client's
   * `duplicate()` (ioredis `Redis` or `Cluster`; node-redis client or cluster, connected by the store); a node-redis
   * Sentinel client subscribes on itself. Return an ioredis or a node-redis client, matching the command client.
   */
  readonly subscriber?: () => AnySubscriberClient;
  /**
   * How notices travel. `'classic'` (default): PUBLISH/SUBSCRIBE, which a Redis Cluster forwards to every node, so
   * each write costs every node of the cluster a message. `'sharded'` (Redis ≥ 7): SPUBLISH/SSUBSCRIBE, which stay on
   * the shard that owns the `{control}` slot (the write script publishes on that shard, the subscriber listens there).
   */
  readonly pubsub?: RedisPubSubMode;
}

/** Fleet resets kept for replicas that missed their notice. */
const MAX_RESETS = 256;

/**
 * The fleet's control store on Redis (SPEC §14.1): standing overrides in one hash, fleet resets in a capped list,
 * the audit trail in a capped stream, replica heartbeats in a hash, notices on a pub/sub channel — all under the
 * `<prefix>:{control}` hash tag, so every script touches one Cluster slot. Writes are one atomic script each
 * (compare-and-set, state, seq, audit and notice together); a notice carries only the new seq, and a replica reads
 * the state itself, so a message someone else publishes on the channel can at most cause one extra read.
 *
 * The state has no TTL: standing overrides live until cleared (or their own ttl ends). Give each service its own
 * `prefix`, and run Redis with persistence if overrides must survive a Redis restart.
 */
export class RedisControlStore implements ControlStore {
  readonly options: ResolvedRedisStoreOptions;
  readonly reconcileInterval: number;
  readonly heartbeatInterval: number;
  readonly #maxAudit: number;
  readonly #runner: ScriptRunner;
  readonly #keys: { state: string; resets: string; audit: string; replicas: string; channel: string };
  readonly #subscriber: () => AnySubscriberClient;
  readonly #client: RedisClient;
  readonly #pubsub: RedisPubSubMode;

  constructor(client: RedisClient, options: RedisControlStoreOptions = {}) {
    const check = new OptionCheck('redisControlStore');
    this.options = Object.freeze(resolveRedisStoreOptions(check, options));
    this.reconcileInterval = check.duration('reconcileInterval', options.reconcileInterval, 1000);
    this.heartbeatInterval = check.duration('heartbeatInterval', options.heartbeatInterval, 5000);
    this.#maxAudit = options.maxAudit ?? 1000;
    check
      .check(
        Number.isFinite(this.reconcileInterval) && this.reconcileInterval >= 10,
        'reconcileInterval',
        'a finite duration ≥ 10ms',
        options.reconcileInterval,
      )
      .check(
        Number.isFinite(this.heartbeatInterval) && this.heartbeatInterval >= 10,
        'heartbeatInterval',
        'a finite duration ≥ 10ms',
        options.heartbeatInterval,
      )
      .check(
        Number.isInteger(this.#maxAudit) && this.#maxAudit >= 1,
        'maxAudit',
        'an integer ≥ 1',
        options.maxAudit,
      );
    const pubsub = options.pubsub ?? 'classic';
    check.check(
      pubsub === 'classic' || pubsub === 'sharded',
      'pubsub',
      "'classic' or 'sharded'",
      options.pubsub,
    );
    const fallback = defaultSubscriber(client, pubsub);
    check.check(
      options.subscriber === undefined ? fallback !== undefined : typeof options.subscriber === 'function',
      'subscriber',
      'a function returning a subscriber connection (required when the client has no duplicate())',
      options.subscriber,
    );
    check.throwIfAny();
    this.#subscriber = options.subscriber ?? fallback!;
    this.#client = client;
    this.#pubsub = pubsub;
    this.#runner = new ScriptRunner(client, 'control', this.options.commandTimeout);
    const base = `${this.options.prefix}:{control}`;
    this.#keys = {
      state: `${base}:state`,
      resets: `${base}:resets`,
      audit: `${base}:audit`,
      replicas: `${base}:replicas`,
      channel: `${base}:changes`,
    };
  }

  async read(now: number): Promise<ControlState> {
    const k = this.#keys;
    const reply = (await this.#runner.run('read', CONTROL_READ, 2, [
      k.state,
      k.resets,
      clockArg(this.options.time, now),
    ])) as string[];
    const seq = Number(reply[0]);
    const at = Number(reply[1]);
    const forced: ForcedOverride[] = [];
    const policies: RetunedPolicy[] = [];
    const resets: ResetRecord[] = [];
    const settings: PolicySetting[] = [];
    let i = 2;
    for (; i < reply.length && reply[i] !== ''; i += 2) {
      const field = String(reply[i]);
      const value = String(reply[i + 1]);
      if (field.startsWith('f:')) {
        const m = /^(\d+)\|(\d*)\|(.*)$/s.exec(value);
        const entry = m === null ? undefined : parseJson(m[3]!);
        if (m === null || !isEntry(entry)) continue;
        forced.push({
          policy: entry.policy,
          route: entry.route ?? undefined,
          seq: Number(m[1]),
          ...(m[2] === '' ? {} : { remaining: Number(m[2]) - at }),
          ...(typeof entry.reason === 'string' ? { reason: entry.reason } : {}),
          ...(typeof entry.actor === 'string' ? { actor: entry.actor } : {}),
        });
      } else if (field.startsWith('v:')) {
        const m = /^(\d+)\|(.*)$/s.exec(value);
        if (m === null) continue;
        policies.push({ policy: field.slice(2), version: Number(m[1]), spec: parseJson(m[2]!) });
      } else if (field.startsWith('s:')) {
        // `s:<action>:<policy>` holds `<seq>|<value JSON>`.
        const f = /^s:(setMode|setChaos):(.*)$/s.exec(field);
        const m = /^(\d+)\|(.*)$/s.exec(value);
        if (f === null || m === null) continue;
        const action = f[1] as SettingAction;
        settings.push({ policy: f[2]!, action, value: parseJson(m[2]!), seq: Number(m[1]) });
      }
    }
    for (i++; i < reply.length; i++) {
      const m = /^(\d+)\|(.*)$/s.exec(String(reply[i]));
      const entry = m === null ? undefined : parseJson(m[2]!);
      if (m !== null && isEntry(entry))
        resets.push({ policy: entry.policy, route: entry.route ?? undefined, seq: Number(m[1]) });
    }
    return { seq, forced, policies, resets, settings };
  }

  async seq(): Promise<number> {
    return Number(await this.#runner.run('seq', CONTROL_SEQ, 1, [this.#keys.state]));
  }

  async write(change: ControlChange, now: number): Promise<ControlWriteResult> {
    const k = this.#keys;
    const entry = JSON.stringify({
      policy: change.policy,
      route: change.route ?? null,
      ...(change.reason === undefined ? {} : { reason: change.reason }),
      ...(change.actor === undefined ? {} : { actor: change.actor }),
    });
    const ttl = change.action === 'forceOpen' && change.ttl !== undefined ? Math.ceil(change.ttl) : '';
    // A retune's spec, or a setting's value (a JSON value of its own: `JSON.stringify(undefined)` is not one).
    const spec =
      change.action === 'retune'
        ? JSON.stringify(change.spec)
        : change.action === 'setMode' || change.action === 'setChaos'
          ? (JSON.stringify(change.value) ?? 'null')
          : '';
    const audit = JSON.stringify(auditOf(change, ttl === '' ? undefined : ttl));
    const reply = (await this.#runner.run('write', CONTROL_WRITE, 3, [
      k.state,
      k.resets,
      k.audit,
      clockArg(this.options.time, now),
      change.action,
      stateKey(change.policy, change.route).id,
      stateKey(change.policy, undefined).id,
      change.policy,
      change.route === undefined ? '0' : '1',
      entry,
      ttl,
      change.action === 'retune' && change.ifVersion !== undefined ? change.ifVersion : '',
      spec,
      audit,
      this.#maxAudit,
      k.channel,
      MAX_RESETS,
      this.#pubsub === 'sharded' ? 'SPUBLISH' : 'PUBLISH',
    ])) as (number | string)[];
    if (Number(reply[0]) !== 1) return { ok: false, version: Number(reply[1]) };
    const version = reply[2] === '' || reply[2] === undefined ? undefined : Number(reply[2]);
    return version === undefined
      ? { ok: true, seq: Number(reply[1]) }
      : { ok: true, seq: Number(reply[1]), version };
  }

  async record(entry: Omit<AuditEntry, 'at'>): Promise<void> {
    await this.#runner.run('record', CONTROL_RECORD, 1, [
      this.#keys.audit,
      JSON.stringify(entry),
      this.#maxAudit,
    ]);
  }

  async audit(limit: number): Promise<AuditEntry[]> {
    const reply = (await this.#runner.run('audit', CONTROL_AUDIT, 1, [this.#keys.audit, limit])) as string[];
    const out: AuditEntry[] = [];
    for (let i = 0; i + 2 < reply.length; i += 3) {
      const body = parseJson(String(reply[i + 1]));
      if (typeof body !== 'object' || body === null) continue;
      const version = String(reply[i + 2] ?? '');
      out.push({
        at: Number(String(reply[i]).split('-')[0]),
        ...(body as Omit<AuditEntry, 'at'>),
        ...(version === '' ? {} : { version: Number(version) }),
      });
    }
    return out;
  }

  async subscribe(onNotice: (seq: number) => void): Promise<ControlSubscription> {
    const sub = this.#subscriber();
    const channel = this.#keys.channel;
    const subscription = openSubscription(
      sub,
      channel,
      (message) => {
        const seq = parseNotice(message);
        if (seq === undefined)
          warnOnce(
            `Ballast: ignored a malformed message on ${channel} (not a control notice): ${JSON.stringify(message).slice(0, 80)}`,
          );
        else onNotice(seq);
      },
      sub !== (this.#client as unknown),
      this.#pubsub,
    );
    try {
      await this.#runner.bound('subscribe', subscription.ready);
    } catch (error) {
      subscription.close();
      throw error instanceof RedisStoreError
        ? error
        : new RedisStoreError('control', 'subscribe', error, false);
    }
    return { close: () => subscription.close() };
  }

  async heartbeat(replica: ReplicaInfo, ttl: number, now: number): Promise<void> {
    const info = JSON.stringify({ id: replica.id, startedAt: replica.startedAt, version: replica.version });
    await this.#runner.run('heartbeat', CONTROL_HEARTBEAT, 1, [
      this.#keys.replicas,
      clockArg(this.options.time, now),
      replica.id,
      Math.ceil(ttl),
      info,
    ]);
  }

  async leave(id: string): Promise<void> {
    await this.#runner.run('leave', CONTROL_LEAVE, 1, [this.#keys.replicas, id]);
  }

  async replicas(now: number): Promise<ReplicaRecord[]> {
    const reply = (await this.#runner.run('replicas', CONTROL_REPLICAS, 1, [
      this.#keys.replicas,
      clockArg(this.options.time, now),
    ])) as string[];
    const out: ReplicaRecord[] = [];
    for (const value of reply) {
      const m = /^\d*\|(\d+)\|(.*)$/s.exec(String(value));
      const info = m === null ? undefined : parseJson(m[2]!);
      if (m === null || typeof info !== 'object' || info === null) continue;
      const r = info as ReplicaInfo;
      out.push({
        id: String(r.id),
        startedAt: Number(r.startedAt),
        version: Number(r.version),
        lastSeen: Number(m[1]),
      });
    }
    return out;
  }
}

function isEntry(
  value: unknown,
): value is { policy: string; route: string | null; reason?: unknown; actor?: unknown } {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v['policy'] === 'string' && (v['route'] === null || typeof v['route'] === 'string');
}

function auditOf(change: ControlChange, ttl: number | undefined): Omit<AuditEntry, 'at' | 'version'> {
  return {
    action: change.action,
    policy: change.policy,
    scope: 'fleet',
    replica: change.replica,
    ...(change.route === undefined ? {} : { route: change.route }),
    ...(change.actor === undefined ? {} : { actor: change.actor }),
    ...(change.reason === undefined ? {} : { reason: change.reason }),
    ...(change.action === 'retune' ? { spec: change.spec } : {}),
    ...(change.action === 'setMode' || change.action === 'setChaos' ? { value: change.value } : {}),
    ...(ttl === undefined ? {} : { ttl }),
  };
}

/** Creates a {@link RedisControlStore} (SPEC §14.1). */
export function redisControlStore(
  client: RedisClient,
  options?: RedisControlStoreOptions,
): RedisControlStore {
  return new RedisControlStore(client, options);
}
