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
  /** Only these policies count (default: all). List the dependencies without which this instance is useless. */
  readonly policies?: readonly string[] | undefined;
}

/**
 * Breaker states as a health indicator. Returns terminus' result shape instead of throwing, as terminus ≥ 10.1's
 * `HealthIndicatorService` does, so it plugs into `HealthCheckService.check([() => health.isHealthy('resilience')])`
 * — and works as plain JSON without terminus. `down` when a counted breaker is open or forced open; half-open is
 * `up` (it is recovering and admitting probes).
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
    const only = options.policies === undefined ? undefined : new Set(options.policies);
    const snapshots = await this.resilience.admin.inspect();
    const breakers: BreakerHealth[] = [];
    let down = false;
    for (const s of snapshots) {
      if (only !== undefined && !only.has(s.policy)) continue;
      if (s.breaker === undefined && !s.forcedOpen) continue;
      const state = s.breaker?.state ?? 'closed';
      breakers.push({ policy: s.policy, route: s.route ?? null, state, forcedOpen: s.forcedOpen });
      if (state === 'open' || s.forcedOpen) down = true;
    }
    return { [key]: { status: down ? 'down' : 'up', breakers } } as ResilienceHealthResult<Key>;
  }
}
