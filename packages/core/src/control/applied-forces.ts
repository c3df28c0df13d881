import type { PolicyRuntime } from '../executor/policy-runtime';
import { forceOpenHere } from '../admin/local-operations';
import { stateKey } from '../stores/ports';
import type { Clock, TimerHandle } from '../time/clock';
import type { ForcedOverride } from './control-store';

interface AppliedForce {
  readonly policy: string;
  readonly route: string | undefined;
  readonly seq: number;
  timer: TimerHandle | undefined;
}

/** What a replica reports when a fleet force-open starts or ends here (its `control_applied` event). */
export interface ForceEvents {
  forced(policy: string, route: string | undefined): void;
  /** `expired`: true when its ttl ended here, false when it was cleared. */
  cleared(policy: string, route: string | undefined, expired: boolean): void;
  /** A ttl ended here: the replica reads the store again (another replica may have forced it anew). */
  expired(): void;
}

/**
 * The fleet's force-opens as this replica applied them (SPEC §14.1), each once per change (its `seq`), by state like
 * the settings: a repeated read or a forged notice changes nothing. An override with a ttl clears itself here when
 * the ttl ends, even while the store is unreachable.
 */
export class AppliedForces {
  readonly #forced = new Map<string, AppliedForce>();

  constructor(
    private readonly runtime: (name: string) => PolicyRuntime | undefined,
    private readonly clock: Clock,
    private readonly events: ForceEvents,
  ) {}

  /** Brings this replica to the store's standing overrides of the policies it runs. */
  match(forced: readonly ForcedOverride[]): void {
    const standing = new Map<string, ForcedOverride>();
    for (const f of forced)
      if (this.runtime(f.policy) !== undefined) standing.set(stateKey(f.policy, f.route).id, f);
    for (const [id, f] of [...this.#forced])
      if (standing.get(id)?.seq !== f.seq) this.#unforce(id, f, standing.has(id) ? undefined : false);
    for (const [id, f] of standing) if (!this.#forced.has(id)) this.force(f, this.runtime(f.policy)!);
  }

  force(f: Pick<ForcedOverride, 'policy' | 'route' | 'seq' | 'remaining'>, pr: PolicyRuntime): void {
    const id = stateKey(f.policy, f.route).id;
    const old = this.#forced.get(id);
    if (old?.seq === f.seq) return;
    if (old?.timer !== undefined) this.clock.clearTimeout(old.timer);
    forceOpenHere(pr, f.route);
    const applied: AppliedForce = { policy: f.policy, route: f.route, seq: f.seq, timer: undefined };
    // The store drops the override when its ttl ends; each replica clears its own flag then, even if the store is
    // unreachable at that moment.
    if (f.remaining !== undefined)
      applied.timer = this.clock.setTimeout(() => {
        applied.timer = undefined;
        if (this.#forced.get(id) !== applied) return;
        this.#unforce(id, applied, true);
        this.events.expired();
      }, f.remaining);
    this.#forced.set(id, applied);
    if (old === undefined) this.events.forced(f.policy, f.route);
  }

  /** A fleet clear: the overrides of `policy` (of one route, or all when `route` is undefined). */
  clear(policy: string, route: string | undefined): void {
    for (const [id, f] of [...this.#forced])
      if (f.policy === policy && (route === undefined || f.route === route)) this.#unforce(id, f, false);
  }

  /** Stops every ttl timer (the replica is closing). */
  stopTimers(): void {
    for (const f of this.#forced.values()) if (f.timer !== undefined) this.clock.clearTimeout(f.timer);
  }

  /** `expired`: true when its ttl ended, false when cleared, undefined when replaced by a newer force-open. */
  #unforce(id: string, f: AppliedForce, expired: boolean | undefined): void {
    if (f.timer !== undefined) this.clock.clearTimeout(f.timer);
    this.#forced.delete(id);
    if (expired === undefined) return;
    const pr = this.runtime(f.policy);
    if (pr === undefined) return;
    // A policy-wide override ends: the policy-wide flag only (routes forced on their own stay forced).
    if (f.route === undefined) pr.forcedAll = false;
    else {
      const ks = pr.keys.get(f.route);
      if (ks !== undefined) ks.forcedOpen = false;
      pr.unpinned++;
    }
    this.events.cleared(f.policy, f.route, expired);
  }
}
