import fc from 'fast-check';
import { isResilienceError } from '../errors/resilience-error';
import { parseDuration, tryParseDuration } from './duration';

describe('parseDuration', () => {
  it.each([
    [250, 250],
    [0, 0],
    [1.5, 1.5],
    ['0', 0],
    ['250ms', 250],
    ['1.5s', 1500],
    ['.5s', 500],
    ['2m', 120_000],
    ['1h', 3_600_000],
    ['0ms', 0],
    ['0.25ms', 0.25],
  ])('reads %p as %p ms', (input, ms) => {
    expect(parseDuration(input)).toBe(ms);
    expect(tryParseDuration(input)).toBe(ms);
  });

  it.each([
    -1,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    Number.NEGATIVE_INFINITY,
    '',
    '-1s',
    '250',
    '1.5',
    ' 1s',
    '1 s',
    '1S',
    '1d',
    '1e3ms',
    '+1s',
    '1.s',
    's',
    `${'9'.repeat(400)}h`,
  ])('rejects %p', (input) => {
    expect(tryParseDuration(input)).toBeUndefined();
    expect(() => parseDuration(input)).toThrow(/Invalid duration/);
  });

  it('rejects non-numbers and non-strings without throwing in the try form', () => {
    for (const v of [null, undefined, {}, [], true, () => 1]) expect(tryParseDuration(v)).toBeUndefined();
  });

  it('throws a configuration ResilienceError naming the value', () => {
    let caught: unknown;
    try {
      parseDuration('-1s');
    } catch (error) {
      caught = error;
    }
    expect(isResilienceError(caught)).toBe(true);
    expect(caught).toMatchObject({ kind: 'configuration', details: { value: '-1s' } });
    expect((caught as Error).message).toContain("got '-1s'");
  });

  it('agrees with unit arithmetic for any non-negative integer amount', () => {
    fc.assert(
      fc.property(
        fc.nat({ max: 1_000_000 }),
        fc.constantFrom(['ms', 1], ['s', 1000], ['m', 60_000], ['h', 3_600_000]),
        (n, [unit, factor]) => {
          expect(parseDuration(`${n}${unit}`)).toBe(n * factor);
        },
      ),
    );
  });
});
