import type {
  AuditEntry,
  ControlChange,
  ControlState,
  ControlStore,
  ControlSubscription,
  ControlWriteResult,
  ForcedOverride,
  ReplicaInfo,
  ReplicaRecord,
  PolicySetting,
  ResetRecord,
  RetunedPolicy,
} from './control-store';
import { stateKey } from '../stores/ports';

/** How many fleet resets a store keeps for replicas that missed their notice (Redis keeps as many). */
export const RESET_HISTORY = 256;
/** Audit entries kept by default (Redis: the stream's approximate cap). */
export const DEFAULT_AUDIT_LIMIT = 1000;

export interface InMemoryControlStoreOptions {
  /** Wall clock for audit and heartbeat times (default `Date.now`); expiry uses the `now` each call passes. */
  readonly wallClock?: () => number;
  /** Audit entries kept, oldest dropped first (default 1000). */
  readonly maxAudit?: number;
}

interface StoredForce {
  readonly policy: string;
  readonly route: string | undefined;
  readonly expiresAt: number | undefined;
  readonly reason: string | undefined;
  readonly actor: string | undefined;
  readonly seq: number;
}

/**
 * The control store of one process (SPEC §14.1). Several `Resilience` instances sharing one instance behave as a
 * fleet: a write notifies every subscriber synchronously, so no reconcile or heartbeat timer is needed. Its state
 * lives as long as the object; a fleet of processes needs a shared store (`redisControlStore`).
 */
export class InMemoryControlStore implements ControlStore {
  #seq = 0;
  readonly #forced = new Map<string, StoredForce>();
  readonly #policies = new Map<string, RetunedPolicy>();
  #resets: ResetRecord[] = [];
  /** By `<action>:<policy>`. */
  readonly #settings = new Map<string, PolicySetting>();
  #audit: AuditEntry[] = [];
  readonly #listeners = new Set<(seq: number) => void>();
  readonly #replicas = new Map<string, { record: ReplicaRecord; expiresAt: number | undefined }>();
  readonly #wall: () => number;
  readonly #maxAudit: number;

  constructor(options: InMemoryControlStoreOptions = {}) {
    this.#wall = options.wallClock ?? Date.now;
    this.#maxAudit = options.maxAudit ?? DEFAULT_AUDIT_LIMIT;
  }

  read(now: number): ControlState {
    const forced: ForcedOverride[] = [];
    for (const [id, f] of this.#forced) {
      if (f.expiresAt !== undefined && f.expiresAt <= now) {
        this.#forced.delete(id);
        continue;
      }
      forced.push({
        policy: f.policy,
        route: f.route,
        seq: f.seq,
        ...(f.expiresAt === undefined ? {} : { remaining: f.expiresAt - now }),
        ...(f.reason === undefined ? {} : { reason: f.reason }),
        ...(f.actor === undefined ? {} : { actor: f.actor }),
      });
    }
    return {
      seq: this.#seq,
      forced,
      policies: [...this.#policies.values()],
      resets: [...this.#resets],
      settings: [...this.#settings.values()],
    };
  }

  seq(): number {
    return this.#seq;
  }

  write(change: ControlChange, now: number): ControlWriteResult {
    const id = stateKey(change.policy, change.route).id;
    let version: number | undefined;
    if (change.action === 'retune') {
      const current = this.#policies.get(change.policy)?.version ?? 0;
      if (change.ifVersion !== undefined && change.ifVersion !== current)
        return { ok: false, version: current };
      version = current + 1;
    }
    const seq = ++this.#seq;
    switch (change.action) {
      case 'forceOpen':
        this.#forced.set(id, {
          policy: change.policy,
          route: change.route,
          expiresAt: change.ttl === undefined ? undefined : now + change.ttl,
          reason: change.reason,
          actor: change.actor,
          seq,
        });
        break;
      case 'clearForcedOpen':
        // No route: the policy-wide override and every route's, as the local operation does.
        for (const [k, f] of this.#forced)
          if (f.policy === change.policy && (change.route === undefined || f.route === change.route))
            this.#forced.delete(k);
        break;
      case 'resetBreaker':
        this.#resets = [...this.#resets, { policy: change.policy, route: change.route, seq }].slice(
          -RESET_HISTORY,
        );
        break;
      case 'retune':
        this.#policies.set(change.policy, { policy: change.policy, version: version!, spec: change.spec });
        break;
      case 'setMode':
      case 'setChaos':
        this.#settings.set(`${change.action}:${change.policy}`, {
          policy: change.policy,
          action: change.action,
          value: change.value,
          seq,
        });
        break;
    }
    this.#append({
      action: change.action,
      policy: change.policy,
      scope: 'fleet',
      replica: change.replica,
      ...auditFields(change, version),
    });
    for (const listener of [...this.#listeners]) listener(seq);
    return version === undefined ? { ok: true, seq } : { ok: true, seq, version };
  }

  record(entry: Omit<AuditEntry, 'at'>): void {
    this.#append(entry);
  }

  audit(limit: number): AuditEntry[] {
    return this.#audit.slice(-limit).reverse();
  }

  subscribe(onNotice: (seq: number) => void): ControlSubscription {
    // A wrapper per subscription: the same function subscribed twice is two subscriptions.
    const listener = (seq: number): void => onNotice(seq);
    this.#listeners.add(listener);
    return { close: () => void this.#listeners.delete(listener) };
  }

  /** `ttl` 0: listed until it leaves (a replica in this process cannot vanish without `close`). */
  heartbeat(replica: ReplicaInfo, ttl: number, now: number): void {
    this.#replicas.set(replica.id, {
      record: { ...replica, lastSeen: this.#wall() },
      expiresAt: ttl > 0 ? now + ttl : undefined,
    });
  }

  leave(id: string): void {
    this.#replicas.delete(id);
  }

  replicas(now: number): ReplicaRecord[] {
    const live: ReplicaRecord[] = [];
    for (const [id, r] of this.#replicas)
      if (r.expiresAt !== undefined && r.expiresAt <= now) this.#replicas.delete(id);
      else live.push(r.record);
    return live;
  }

  #append(entry: Omit<AuditEntry, 'at'>): void {
    this.#audit.push({ at: this.#wall(), ...entry });
    if (this.#audit.length > this.#maxAudit) this.#audit = this.#audit.slice(-this.#maxAudit);
  }
}

/** The optional audit fields of a change, present only when set. */
export function auditFields(
  change: ControlChange,
  version: number | undefined,
): Pick<AuditEntry, 'route' | 'actor' | 'reason' | 'spec' | 'value' | 'version' | 'ttl'> {
  return {
    ...(change.route === undefined ? {} : { route: change.route }),
    ...(change.actor === undefined ? {} : { actor: change.actor }),
    ...(change.reason === undefined ? {} : { reason: change.reason }),
    ...(change.action === 'retune' ? { spec: change.spec } : {}),
    ...(change.action === 'setMode' || change.action === 'setChaos' ? { value: change.value } : {}),
    ...(version === undefined ? {} : { version }),
    ...(change.action === 'forceOpen' && change.ttl !== undefined ? { ttl: change.ttl } : {}),
  };
}
