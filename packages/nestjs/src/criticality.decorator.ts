import { Criticality as CriticalityLevels } from '@ballast/core';
import {
  CriticalityMetadata,
  parseCriticality,
  type CriticalityLevel,
  type CriticalityName,
} from './criticality-level';
import { attachInterceptor } from './interceptor-entry';

export { CriticalityMetadata, parseCriticality };
export type { CriticalityLevel, CriticalityName };

function criticalityDecorator(level: CriticalityLevel | CriticalityName): MethodDecorator & ClassDecorator {
  const parsed = parseCriticality(level);
  // Fail at class definition, not at the first request: a typo here would silently demote traffic.
  if (parsed === undefined) throw new TypeError(`@Criticality: unknown level ${JSON.stringify(level)}`);
  // The interceptor rides along with the decorator, so only decorated handlers pay Nest's interceptor step.
  const metadata = CriticalityMetadata(parsed) as (
    target: object,
    key?: string | symbol,
    descriptor?: PropertyDescriptor,
  ) => void;
  return (target: object, key?: string | symbol, descriptor?: PropertyDescriptor): void => {
    metadata(target, key, descriptor);
    attachInterceptor(target, key, descriptor);
  };
}

/**
 * Marks a handler or controller as `BEST_EFFORT` … `CRITICAL` (core's `bindCriticality`), so prioritized
 * bulkheads shed less important work first. It is also the level constants themselves, so one import serves:
 * `@Criticality(Criticality.CRITICAL)` or `@Criticality('CRITICAL')`.
 *
 * @publicApi
 */
export const Criticality: typeof criticalityDecorator & typeof CriticalityLevels = Object.assign(
  criticalityDecorator,
  CriticalityLevels,
);
