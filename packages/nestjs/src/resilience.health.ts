import { Injectable } from '@nestjs/common';
import { Resilience, type BreakerState } from '@ballast/core';

/** One breaker as the health check reports it (no stores, no parameters: health endpoints are often public). */
export interface BreakerHealth {
  readonly policy: string;
  readonly route: string | null;
  readonly state: BreakerState;
  readonly forcedOpen: boolean;
}

/** `@nestjs/terminus`'s `HealthIndicatorResult` shape, declared here so terminus stays optional. */
export type ResilienceHealthResult<Key extends string = string> = Record<
  Key,
  { status: 'up' | 'down'; breakers: BreakerHealth[] }
>;

export interface ResilienceHealthOptions {
  /**
   * Only these policies count (default: all). List the dependencies without which this instance is useless. An
   * unknown name rejects with Ballast's `unknown_policy` error: a typo must not make the check `up` forever.
   */
  readonly policies?: readonly string[] | undefined;
}

/**
 * Breaker states as a health indicator. Returns terminus' result shape instead of throwing, as terminus' own
 * `HealthIndicatorService` (`check(key).up()` / `.down()`) does, so it plugs into
 * `HealthCheckService.check([() => health.isHealthy('resilience')])` — and works as plain JSON without terminus.
 * Terminus ≥ 11 (the first major for Nest 11) counts a returned `down` as a failed check (503); terminus 10 (Nest
 * 9/10 only) counted only a thrown `HealthCheckError`, which terminus 12 no longer recognises (it rethrows → 500),
 * so returning is the one answer that works on every terminus Nest 11 can install.
 * `down` when a counted `(policy, route)` has its breaker open or is forced open — including a route-less
 * force-open before any traffic, which `inspect()` reports as the policy-wide entry; half-open is `up` (it is
 * recovering and admitting probes).
 *
 * @publicApi
 */
@Injectable()
export class ResilienceHealthIndicator {
  constructor(private readonly resilience: Resilience) {}

  async isHealthy<const Key extends string = 'resilience'>(
    key: Key = 'resilience' as Key,
    options: ResilienceHealthOptions = {},
  ): Promise<ResilienceHealthResult<Key>> {
    // Per counted policy: inspects nothing else, and rejects with `unknown_policy` on a name that is not registered.
    const snapshots =
      options.policies === undefined
        ? await this.resilience.admin.inspect()
        : (
            await Promise.all(
              [...new Set(options.policies)].map((policy) => this.resilience.admin.inspect({ policy })),
            )
          ).flat();
    const breakers: BreakerHealth[] = [];
    let down = false;
    for (const s of snapshots) {
      if (s.breaker === undefined && !s.forcedOpen) continue;
      const state = s.breaker?.state ?? 'closed';
      breakers.push({ policy: s.policy, route: s.route ?? null, state, forcedOpen: s.forcedOpen });
      if (state === 'open' || s.forcedOpen) down = true;
    }
    return { [key]: { status: down ? 'down' : 'up', breakers } } as ResilienceHealthResult<Key>;
  }
}
