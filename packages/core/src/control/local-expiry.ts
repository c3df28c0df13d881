import { stateKey } from '../stores/ports';
import type { Clock, TimerHandle } from '../time/clock';

/**
 * Expiry timers of this replica's local-scope force-opens with a ttl (SPEC §14.1). A local force-open never reaches
 * the store, so nothing else would lift it when its ttl ends; a fleet force-open's ttl is the store's business.
 */
export class LocalExpiries {
  readonly #timers = new Map<string, TimerHandle>();

  constructor(private readonly clock: Clock) {}

  /** Arms (or re-arms) the expiry of one key; `onExpire` runs once when the ttl ends. */
  arm(policy: string, route: string | undefined, ttl: number, onExpire: () => void): void {
    const id = stateKey(policy, route).id;
    const old = this.#timers.get(id);
    if (old !== undefined) this.clock.clearTimeout(old);
    this.#timers.set(
      id,
      this.clock.setTimeout(() => {
        this.#timers.delete(id);
        onExpire();
      }, ttl),
    );
  }

  /** Drops the pending expiry of a key, or of every route of the policy when `route` is undefined. */
  forget(policy: string, route: string | undefined): void {
    const base = stateKey(policy, route).id;
    for (const [id, timer] of this.#timers)
      if (id === base || (route === undefined && id.startsWith(`${base}|`))) {
        this.clock.clearTimeout(timer);
        this.#timers.delete(id);
      }
  }

  clear(): void {
    for (const t of this.#timers.values()) this.clock.clearTimeout(t);
    this.#timers.clear();
  }
}
