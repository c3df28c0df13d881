import 'reflect-metadata';
import { Reflector } from '@nestjs/core';
import { Criticality as CoreCriticality } from '@ballast/core';
import { Criticality, CriticalityMetadata, parseCriticality } from './criticality.decorator';

describe('@Criticality', () => {
  it('is also the level constants of core, so one import serves', () => {
    expect(Criticality.CRITICAL).toBe(CoreCriticality.CRITICAL);
    expect(Criticality.BEST_EFFORT).toBe(CoreCriticality.BEST_EFFORT);
  });

  it('records the level on a method or a class, by constant or by name', () => {
    @Criticality('DEGRADED')
    class Handlers {
      @Criticality(Criticality.CRITICAL)
      checkout(): void {}
    }
    const reflector = new Reflector();
    expect(reflector.get(CriticalityMetadata, Handlers.prototype.checkout)).toBe(3);
    expect(reflector.get(CriticalityMetadata, Handlers)).toBe(1);
  });

  it('fails at definition time on an unknown level', () => {
    expect(() => Criticality('URGENT' as never)).toThrow('@Criticality: unknown level "URGENT"');
    expect(() => Criticality(7 as never)).toThrow(TypeError);
  });
});

describe('parseCriticality', () => {
  it('accepts names in any common spelling and the numbers 0–3', () => {
    expect(
      ['CRITICAL', 'critical', ' best_effort ', 'best-effort', 'Normal', '1', 0].map(parseCriticality),
    ).toEqual([3, 3, 0, 0, 2, 1, 0]);
  });

  it('ignores anything else', () => {
    expect(['', 'urgent', '4', '-1', undefined].map(parseCriticality)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });
});
