/**
 * The control-store port (SPEC §14.1): the operator's standing overrides — forced-open keys, retuned policies — kept
 * where every replica of a fleet reads them, with a change counter, replica heartbeats and an audit trail.
 *
 * The store holds *state*, never commands: a replica applies a change by reading the state and making its own
 * match (see `ControlReplica`). A push only says "the state changed, now at seq N"; a missed push is repaired by the
 * next reconcile, and a notice someone else forged can at most cause one extra read.
 *
 * Methods may answer synchronously (in-memory) or with a Promise (remote), as the other store ports do.
 */
/** As in the other store ports (`stores/ports.ts`, which imports this file: not the other way round). */
type MaybePromise<T> = T | Promise<T>;

/** What an operator did: the admin method's name (SPEC §14.1). */
export type ControlAction =
  'forceOpen' | 'clearForcedOpen' | 'resetBreaker' | 'retune' | 'setMode' | 'setChaos';

/** A key the fleet holds forced open. */
export interface ForcedOverride {
  readonly policy: string;
  /** `undefined`: the whole policy (every route, including routes first seen later). */
  readonly route: string | undefined;
  /** ms left before it clears itself, on the store's clock; absent: until cleared. Always > 0 when present. */
  readonly remaining?: number;
  readonly reason?: string;
  readonly actor?: string;
  /** The change that set it: a later force-open of the same key (a new ttl) has a new seq. */
  readonly seq: number;
}

/** A policy the fleet retuned: its JSON spec and version (1 for the first fleet retune, +1 for each one after). */
export interface RetunedPolicy {
  readonly policy: string;
  readonly version: number;
  /** The policy's JSON spec (`policyToSpec`), as validated by the writer. */
  readonly spec: unknown;
}

/** A fleet-wide breaker reset, kept (newest last, capped) so a replica that missed its push still applies it. */
export interface ResetRecord {
  readonly policy: string;
  readonly route: string | undefined;
  readonly seq: number;
}

/** The admin actions that set a standing per-policy setting (SPEC §14.3): the mode, the chaos injection. */
export type SettingAction = 'setMode' | 'setChaos';

/**
 * A per-policy setting the fleet holds: the last `setMode` or `setChaos` of a policy, as JSON data (`'shadow'`, a
 * chaos patch). Each new one replaces the previous of its action; they outlive retunes.
 */
export interface PolicySetting {
  readonly policy: string;
  readonly action: SettingAction;
  readonly value: unknown;
  /** The change that set it. */
  readonly seq: number;
}

/** The standing overrides, as one consistent read. */
export interface ControlState {
  /** Incremented by every write; replicas compare it to know whether they are behind. */
  readonly seq: number;
  readonly forced: readonly ForcedOverride[];
  readonly policies: readonly RetunedPolicy[];
  readonly resets: readonly ResetRecord[];
  readonly settings: readonly PolicySetting[];
}

/** One fleet-wide write. `reason` and `actor` go to the audit entry (and, for a force-open, to the override). */
export type ControlChange = (
  | { readonly action: 'forceOpen'; readonly ttl?: number | undefined }
  | { readonly action: 'clearForcedOpen' }
  | { readonly action: 'resetBreaker' }
  | { readonly action: 'retune'; readonly spec: unknown; readonly ifVersion?: number | undefined }
  | { readonly action: SettingAction; readonly value: unknown }
) & {
  readonly policy: string;
  readonly route?: string | undefined;
  readonly reason?: string | undefined;
  readonly actor?: string | undefined;
  /** The writing replica's id, for the audit trail. */
  readonly replica: string;
};

/**
 * How a write ended. A retune whose `ifVersion` is not the stored version changes nothing and answers
 * `{ ok: false, version }` (the version that stands).
 */
export type ControlWriteResult =
  | { readonly ok: true; readonly seq: number; readonly version?: number }
  | { readonly ok: false; readonly version: number };

/** One line of the audit trail, newest first when read. Never holds a credential: only what the admin call named. */
export interface AuditEntry {
  /** Wall-clock ms since the epoch (the store's clock: Redis `TIME`). */
  readonly at: number;
  readonly action: ControlAction;
  readonly policy: string;
  readonly route?: string;
  readonly scope: 'fleet' | 'local';
  readonly actor?: string;
  readonly reason?: string;
  /** `retune`: the JSON spec applied. */
  readonly spec?: unknown;
  /** `setMode`, `setChaos`: the setting given. */
  readonly value?: unknown;
  /** `retune`: the version it produced (fleet scope). */
  readonly version?: number;
  /** `forceOpen`: ms until it clears itself. */
  readonly ttl?: number;
  /** The replica that made the call. */
  readonly replica?: string;
}

/** What a replica announces in its heartbeat. */
export interface ReplicaInfo {
  readonly id: string;
  /** Wall-clock ms since the epoch. */
  readonly startedAt: number;
  /** The control `seq` this replica has applied: a replica behind the others shows a lower number. */
  readonly version: number;
}

export interface ReplicaRecord extends ReplicaInfo {
  /** Wall-clock ms of its last heartbeat, on the store's clock. */
  readonly lastSeen: number;
}

/** A live subscription; `close` ends it (and any connection it opened). */
export interface ControlSubscription {
  close(): MaybePromise<void>;
}

export interface ControlStore {
  /** The standing overrides now (expired force-opens left out). `now`: the caller's clock, ms. */
  read(now: number): MaybePromise<ControlState>;
  /** The current `seq`, cheaply: a reconcile reads the whole state only when it moved. */
  seq(): MaybePromise<number>;
  /**
   * Applies one change atomically: checks `ifVersion`, updates the state, increments `seq`, appends the audit entry
   * and notifies subscribers — all or nothing.
   */
  write(change: ControlChange, now: number): MaybePromise<ControlWriteResult>;
  /** Appends an audit entry of a local-scope action (the fleet's trail shows what each replica did alone). */
  record(entry: Omit<AuditEntry, 'at'>): MaybePromise<void>;
  /** Newest first, at most `limit`. */
  audit(limit: number): MaybePromise<AuditEntry[]>;
  /**
   * Calls `onNotice(seq)` after each write (from any replica). May be called with a seq that is not newer, or with
   * none at all for a while (a dropped connection): the replica's reconcile covers both.
   */
  subscribe(onNotice: (seq: number) => void): MaybePromise<ControlSubscription>;
  /** Records that `replica` is alive for `ttl` ms from now. */
  heartbeat(replica: ReplicaInfo, ttl: number, now: number): MaybePromise<void>;
  /** Removes a replica that is shutting down. */
  leave(id: string): MaybePromise<void>;
  /** The replicas whose heartbeat has not expired. */
  replicas(now: number): MaybePromise<ReplicaRecord[]>;
  /**
   * ms between a replica's reconciles (a cheap `seq` read). Absent: notices are never lost (an in-process store),
   * so no reconcile timer runs.
   */
  readonly reconcileInterval?: number;
  /** ms between heartbeats; a heartbeat lives three of them. Absent: no heartbeat timer (in-process store). */
  readonly heartbeatInterval?: number;
}
