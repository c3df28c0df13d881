import { Reflector } from '@nestjs/core';
import { Criticality as CriticalityLevels } from '@ballast/core';

/** One of `Criticality.BEST_EFFORT` (0) … `Criticality.CRITICAL` (3). */
export type CriticalityLevel = (typeof CriticalityLevels)[keyof typeof CriticalityLevels];
/** The level names, as accepted by `@Criticality('CRITICAL')` and the criticality request header. */
export type CriticalityName = keyof typeof CriticalityLevels;

/** Typed metadata behind `@Criticality`. */
export const CriticalityMetadata = Reflector.createDecorator<CriticalityLevel>({
  key: 'ballast:criticality',
});

const LEVEL_BY_NAME: ReadonlyMap<string, CriticalityLevel> = new Map(
  Object.entries(CriticalityLevels).flatMap(([name, level]) => [
    [name.toLowerCase(), level],
    [name.toLowerCase().replace('_', '-'), level],
    [String(level), level],
  ]),
);

/** Parses a level name in any case (`CRITICAL`, `best_effort`, `Best-Effort`) or number (`0`…`3`); else undefined. */
export function parseCriticality(value: string | number | undefined): CriticalityLevel | undefined {
  if (value === undefined) return undefined;
  return LEVEL_BY_NAME.get(typeof value === 'number' ? String(value) : value.trim().toLowerCase());
}
