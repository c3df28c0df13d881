import { EXCEPTION_KINDS } from './resilience-error';
import { OUTCOME_CLASS_BY_KIND, outcomeClass } from './outcome-class';

describe('outcomeClass', () => {
  it('follows the SPEC §4 table', () => {
    expect(outcomeClass(undefined)).toBe('healthy');
    for (const k of [
      'validation',
      'domain',
      'not_found',
      'conflict',
      'precondition',
      'authentication',
      'authorization',
    ] as const)
      expect(outcomeClass(k)).toBe('healthy');
    for (const k of ['infrastructure', 'timeout', 'internal'] as const)
      expect(outcomeClass(k)).toBe('failure');
    for (const k of ['throttled', 'concurrency'] as const) expect(outcomeClass(k)).toBe('overload');
  });

  it('treats our own aborts as cancelled whatever the kind', () => {
    for (const k of [undefined, ...EXCEPTION_KINDS]) expect(outcomeClass(k, true)).toBe('cancelled');
  });

  it('covers every kind and is frozen', () => {
    for (const k of EXCEPTION_KINDS) expect(OUTCOME_CLASS_BY_KIND[k]).toBeDefined();
    expect(Object.isFrozen(OUTCOME_CLASS_BY_KIND)).toBe(true);
  });
});
