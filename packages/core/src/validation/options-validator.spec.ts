import { isResilienceError } from '../errors/resilience-error';
import {
  OptionsValidator,
  Rules,
  describeRule,
  formatValue,
  joinPath,
  satisfies,
  violationsOf,
} from './options-validator';

function caught(fn: () => void): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('OptionsValidator', () => {
  it('collects every violation into one invalid_policy configuration error', () => {
    const v = new OptionsValidator('CircuitBreakerStrategy');
    v.number('failureRatio', 1.5, Rules.RATIO);
    v.duration('samplingWindow', '-1s', true);
    v.number('minThroughput', 3, Rules.COUNT_AT_LEAST_ONE);
    const error = caught(() => v.throwIfInvalid());
    expect(isResilienceError(error)).toBe(true);
    expect(error).toMatchObject({ kind: 'configuration', code: 'invalid_policy' });
    expect((error as Error).message).toBe(
      "Invalid CircuitBreakerStrategy options: failureRatio must be in (0, 1], got 1.5; samplingWindow must be a duration > 0, got '-1s'",
    );
    expect(violationsOf(error)).toEqual([
      { path: 'failureRatio', constraint: 'in (0, 1]', value: 1.5 },
      { path: 'samplingWindow', constraint: 'a duration > 0', value: '-1s' },
    ]);
  });

  it('does not throw when everything is valid, and returns resolved values', () => {
    const v = new OptionsValidator('X');
    expect(v.duration('a', '2s', true)).toBe(2000);
    expect(v.optionalDuration('b', undefined, false, 7)).toBe(7);
    expect(v.optionalNumber('c', undefined, Rules.POSITIVE)).toBeUndefined();
    expect(v.boolean('d', undefined, true)).toBe(true);
    expect(v.oneOf('e', 'full', ['none', 'full'], 'none')).toBe('full');
    expect(v.ok).toBe(true);
    expect(() => v.throwIfInvalid()).not.toThrow();
  });

  it('prefixes paths, adopts nested violations and sets the policy', () => {
    const v = new OptionsValidator('policy spec', {
      prefix: 'strategies[2]',
      heading: 'Invalid policy spec',
      policy: 'p',
    });
    v.number('failureRatio', 0, Rules.RATIO);
    v.adopt([{ path: 'base', constraint: 'a duration > 0', value: 0 }], 'backoff');
    const built = v.nested('budget', () => {
      const inner = new OptionsValidator('RetryBudget');
      inner.number('ratio', 2, Rules.RATIO);
      inner.throwIfInvalid();
      return 1;
    });
    expect(built).toBeUndefined();
    const error = caught(() => v.throwIfInvalid());
    expect(error).toMatchObject({ policy: 'p' });
    expect(violationsOf(error)?.map((x) => x.path)).toEqual([
      'strategies[2].failureRatio',
      'strategies[2].backoff.base',
      'strategies[2].budget.ratio',
    ]);
    expect(
      (error as Error).message.startsWith(
        'Invalid policy spec: strategies[2].failureRatio must be in (0, 1], got 0',
      ),
    ).toBe(true);
  });

  it('lets unrelated errors escape nested()', () => {
    const v = new OptionsValidator('X');
    expect(() =>
      v.nested('a', () => {
        throw new TypeError('boom');
      }),
    ).toThrow(TypeError);
    expect(violationsOf(new TypeError('x'))).toBeUndefined();
  });

  it('reports invalid booleans and enum values', () => {
    const v = new OptionsValidator('X');
    v.boolean('flag', 'yes', false);
    v.oneOf('jitter', 'wobbly', ['none', 'full'], 'none');
    expect(violationsOf(caught(() => v.throwIfInvalid()))).toEqual([
      { path: 'flag', constraint: 'a boolean', value: 'yes' },
      { path: 'jitter', constraint: "one of 'none', 'full'", value: 'wobbly' },
    ]);
  });
});

describe('rules and formatting', () => {
  it('describes ranges', () => {
    expect(describeRule(Rules.RATIO)).toBe('in (0, 1]');
    expect(describeRule(Rules.OPEN_UNIT)).toBe('in (0, 1)');
    expect(describeRule(Rules.POSITIVE)).toBe('> 0');
    expect(describeRule(Rules.COUNT_AT_LEAST_ONE)).toBe('an integer ≥ 1');
    expect(describeRule({ integer: true, min: 1, max: 3 })).toBe('an integer in [1, 3]');
    expect(describeRule({ max: 3, maxExclusive: true })).toBe('< 3');
    expect(describeRule({})).toBe('a finite number');
    expect(describeRule({ integer: true })).toBe('an integer');
  });

  it('checks values against rules', () => {
    expect(satisfies(1, Rules.RATIO)).toBe(true);
    expect(satisfies(0, Rules.RATIO)).toBe(false);
    expect(satisfies(1, Rules.OPEN_UNIT)).toBe(false);
    expect(satisfies(1.5, Rules.COUNT_AT_LEAST_ONE)).toBe(false);
    expect(satisfies(Number.NaN, {})).toBe(false);
    expect(satisfies('1', {})).toBe(false);
  });

  it('formats values briefly', () => {
    expect(formatValue('-1s')).toBe("'-1s'");
    expect(formatValue('x'.repeat(100))).toHaveLength(62);
    expect(formatValue(Number.NaN)).toBe('NaN');
    expect(formatValue(null)).toBe('null');
    expect(formatValue(undefined)).toBe('undefined');
    expect(formatValue(() => 1)).toBe('a function');
    expect(formatValue([1, 'a'])).toBe("[1, 'a']");
    expect(formatValue([1, 2, 3, 4, 5, 6])).toBe('[1, 2, 3, 4, 5, …]');
    expect(formatValue({ a: 1, b: { c: { d: 1 } } })).toBe('{ a: 1, b: { c: {…} } }');
    expect(formatValue({})).toBe('{}');
    expect(formatValue(new Map())).toBe('a Map');
    expect(formatValue(Symbol('s'))).toBe('Symbol(s)');
  });

  it('joins paths', () => {
    expect(joinPath('', 'a')).toBe('a');
    expect(joinPath('a', '')).toBe('a');
    expect(joinPath('strategies', '[2]')).toBe('strategies[2]');
    expect(joinPath('strategies[2]', 'backoff.base')).toBe('strategies[2].backoff.base');
  });
});
