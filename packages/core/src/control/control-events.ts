import type { Engine } from '../executor/engine';
import { policyFromSpec } from '../policy/policy-spec';
import type { ResiliencePolicy } from '../policy/resilience-policy';
import type { ControlAction } from './control-store';

/** Emits `control_applied` (SPEC §14.1) when a replica applied a change, if anyone listens. */
export function emitApplied(
  e: Engine,
  action: ControlAction,
  policy: string,
  route: string | undefined,
  scope: 'fleet' | 'local',
  expired?: boolean,
  version?: number,
): void {
  if (!e.listening) return;
  e.emit({
    type: 'control_applied',
    policy,
    route,
    action,
    scope,
    ...(expired === true ? { expired } : {}),
    ...(version === undefined ? {} : { version }),
  });
}

/**
 * The policy of a fleet retune, or undefined when this replica cannot read its spec (a newer replica wrote it during a
 * rolling deploy): what runs is kept, and a warning says why.
 */
export function fleetPolicy(policy: string, spec: unknown, version: number): ResiliencePolicy | undefined {
  try {
    return policyFromSpec(spec);
  } catch (error) {
    process.emitWarning(
      `Ballast: the fleet's retune of '${policy}' (version ${version}) is invalid here and was not applied: ${String(error)}`,
      'BallastControlWarning',
    );
    return undefined;
  }
}
