import type { PolicyRuntime } from '../executor/policy-runtime';
import type { PolicySetting, SettingAction } from './control-store';

/** Applies one setting's JSON value to a policy runtime; false when this replica cannot read it (and leaves it). */
export type SettingApplier = (pr: PolicyRuntime, action: SettingAction, value: unknown) => boolean;

/**
 * The fleet's per-policy settings (`setMode`, `setChaos`) as this replica applied them: each is applied once per
 * change (its `seq`), by state, like the force-opens — a repeated read or a forged notice changes nothing.
 */
export class AppliedSettings {
  readonly #seqs = new Map<string, number>();
  /** The fleet's value of each setting this replica has seen (valid here or not). */
  readonly #values = new Map<string, unknown>();

  constructor(
    private readonly runtime: (name: string) => PolicyRuntime | undefined,
    private readonly applier: SettingApplier,
    private readonly applied: (action: SettingAction, policy: string) => void,
  ) {}

  /** Brings this replica to the standing settings; returns nothing (a setting it cannot read is warned about). */
  match(settings: readonly PolicySetting[]): void {
    for (const s of settings) this.apply(s);
  }

  /** The fleet's standing value of a setting, as this replica last applied it. */
  valueOf(action: SettingAction, policy: string): unknown {
    return this.#values.get(`${action}:${policy}`);
  }

  /** One setting, unless this replica already applied that change. */
  apply(s: PolicySetting): void {
    const id = `${s.action}:${s.policy}`;
    if (this.#seqs.get(id) === s.seq) return;
    const pr = this.runtime(s.policy);
    if (pr === undefined) return;
    this.#seqs.set(id, s.seq);
    this.#values.set(id, s.value);
    if (this.applier(pr, s.action, s.value)) this.applied(s.action, s.policy);
    else
      process.emitWarning(
        `Ballast: the fleet's ${s.action} of '${s.policy}' (${JSON.stringify(s.value)}) is invalid here and was not applied`,
        'BallastControlWarning',
      );
  }
}
