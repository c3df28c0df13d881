import fc from 'fast-check';
import { seededRandom } from '@ballast/testing';
import { violationsOf } from '../validation/options-validator';
import { BackoffStrategy } from './backoff-strategy';
import { RetryBudget, RetryBudgetState } from './retry-budget';
import { DEFAULT_BACKOFF, RetryStrategy } from './retry-strategy';
import type { JitterMode } from './types';

function violations(build: () => unknown) {
  try {
    build();
  } catch (error) {
    return violationsOf(error);
  }
  throw new Error('expected the constructor to throw');
}
const constant = (r: number) => () => r;

describe('BackoffStrategy', () => {
  it('defaults multiplier 2 and decorrelated jitter', () => {
    const b = new BackoffStrategy({ base: '100ms', max: '10s' });
    expect(b.options).toEqual({ base: 100, max: 10_000, multiplier: 2, jitter: 'decorrelated' });
    expect(Object.isFrozen(b) && Object.isFrozen(b.options)).toBe(true);
  });

  it('grows exponentially and caps at max without jitter', () => {
    const b = new BackoffStrategy({ base: 100, max: 1000, jitter: 'none' });
    expect([1, 2, 3, 4, 5, 1e6].map((n) => b.delay(n, 0, constant(0.5)))).toEqual([
      100, 200, 400, 800, 1000, 1000,
    ]);
    expect(
      new BackoffStrategy({ base: 100, max: 1000, multiplier: 1, jitter: 'none' }).delay(9, 0, constant(0.5)),
    ).toBe(100);
  });

  it('full jitter scales the exponential delay by random', () => {
    const b = new BackoffStrategy({ base: 100, max: 1000, jitter: 'full' });
    expect(b.delay(3, 0, constant(0.25))).toBe(100);
    expect(b.delay(3, 0, constant(0))).toBe(0);
  });

  it('equal jitter keeps at least half', () => {
    const b = new BackoffStrategy({ base: 100, max: 1000, jitter: 'equal' });
    expect(b.delay(3, 0, constant(0))).toBe(200);
    expect(b.delay(3, 0, constant(0.5))).toBe(300);
  });

  it('decorrelated jitter draws in [base, max(base, previous)·(multiplier+1)] capped at max', () => {
    const b = new BackoffStrategy({ base: 100, max: 1000 });
    expect(b.delay(1, 0, constant(0))).toBe(100);
    expect(b.delay(1, 0, constant(0.5))).toBe(200); // 100 + 0.5·(300 − 100)
    expect(b.delay(2, 200, constant(0.5))).toBe(350); // 100 + 0.5·(600 − 100)
    expect(b.delay(9, 900, constant(0.99))).toBe(1000);
  });

  it('never yields NaN or negative values from a faulty random', () => {
    for (const jitter of ['full', 'equal', 'decorrelated'] as const) {
      const b = new BackoffStrategy({ base: 10, max: 100, jitter });
      for (const r of [Number.NaN, -1, 2]) {
        const d = b.delay(2, 50, constant(r));
        expect(d).toBeGreaterThanOrEqual(0);
        expect(d).toBeLessThanOrEqual(100);
      }
    }
  });

  it('is finite, ≥ 0 and ≤ max for any retry up to 1e6 and any random in [0, 1)', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.001, max: 1e6, noNaN: true }),
        fc.double({ min: 0, max: 1e7, noNaN: true }),
        fc.double({ min: 1, max: 100, noNaN: true }),
        fc.constantFrom<JitterMode>('none', 'full', 'equal', 'decorrelated'),
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.double({ min: 0, max: 1e9, noNaN: true }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (base, extra, multiplier, jitter, retry, previous, r) => {
          const b = new BackoffStrategy({ base, max: base + extra, multiplier, jitter });
          const d = b.delay(retry, previous, constant(r));
          expect(Number.isFinite(d)).toBe(true);
          expect(d).toBeGreaterThanOrEqual(0);
          expect(d).toBeLessThanOrEqual(base + extra);
        },
      ),
    );
  });

  it('is reproducible from a seeded random', () => {
    const b = new BackoffStrategy({ base: 10, max: 10_000 });
    const run = () => {
      const random = seededRandom(7);
      let previous = 0;
      return [1, 2, 3, 4].map((n) => (previous = b.delay(n, previous, random)));
    };
    expect(run()).toEqual(run());
  });

  it('reports every violation', () => {
    expect(
      violations(() => new BackoffStrategy({ base: 0, max: -1, multiplier: 0.5, jitter: 'wild' as never })),
    ).toEqual([
      { path: 'base', constraint: 'a duration > 0', value: 0 },
      { path: 'max', constraint: 'a duration ≥ 0', value: -1 },
      { path: 'multiplier', constraint: '≥ 1', value: 0.5 },
      { path: 'jitter', constraint: "one of 'none', 'full', 'equal', 'decorrelated'", value: 'wild' },
    ]);
    expect(violations(() => new BackoffStrategy({ base: '1s', max: '500ms' }))).toEqual([
      { path: 'max', constraint: '≥ base (1000 ms)', value: '500ms' },
    ]);
  });
});

describe('RetryBudget and RetryBudgetState', () => {
  it('defaults minThroughput to 0 and validates ratio', () => {
    expect(new RetryBudget({ ratio: 0.2 }).options).toEqual({ ratio: 0.2, minThroughput: 0 });
    expect(violations(() => new RetryBudget({ ratio: 0, minThroughput: -1 }))?.map((v) => v.path)).toEqual([
      'ratio',
      'minThroughput',
    ]);
  });

  it('starts full at max(1, minThroughput·ratio)', () => {
    expect(new RetryBudgetState({ ratio: 0.1, minThroughput: 0 }).balance).toBe(1);
    const s = new RetryBudgetState({ ratio: 0.1, minThroughput: 50 });
    expect(s.cap).toBe(5);
    expect(s.balance).toBe(5);
  });

  it('spends one token per retry and earns ratio per call, capped', () => {
    const s = new RetryBudgetState({ ratio: 0.1, minThroughput: 0 });
    expect(s.tryWithdraw()).toBe(true);
    expect(s.tryWithdraw()).toBe(false);
    for (let i = 0; i < 9; i++) s.onCall();
    expect(s.tryWithdraw()).toBe(false);
    s.onCall(); // ten deposits of 0.1 buy one retry despite float drift
    expect(s.tryWithdraw()).toBe(true);
    for (let i = 0; i < 100; i++) s.onCall();
    expect(s.balance).toBe(1);
  });

  it('keeps the balance within [0, cap] under any sequence', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.01, max: 1, noNaN: true }),
        fc.nat({ max: 1000 }),
        fc.array(fc.boolean(), { maxLength: 300 }),
        (ratio, minThroughput, ops) => {
          const s = new RetryBudgetState({ ratio, minThroughput });
          for (const call of ops) {
            if (call) s.onCall();
            else s.tryWithdraw();
            expect(s.balance).toBeGreaterThanOrEqual(0);
            expect(s.balance).toBeLessThanOrEqual(s.cap);
          }
        },
      ),
    );
  });
});

describe('RetryStrategy', () => {
  it('defaults backoff and retryOn', () => {
    const s = new RetryStrategy({ maxAttempts: 3 });
    expect(s.type).toBe('retry');
    expect(s.options).toEqual({
      maxAttempts: 3,
      backoff: DEFAULT_BACKOFF,
      retryOn: ['infrastructure'],
      budget: undefined,
    });
    expect(DEFAULT_BACKOFF.options).toEqual({
      base: 100,
      max: 10_000,
      multiplier: 2,
      jitter: 'decorrelated',
    });
    expect(Object.isFrozen(s) && Object.isFrozen(s.options) && Object.isFrozen(s.options.retryOn)).toBe(true);
  });

  it('accepts backoff and budget as instances or options', () => {
    const backoff = new BackoffStrategy({ base: 1, max: 2 });
    const budget = new RetryBudget({ ratio: 0.5 });
    expect(new RetryStrategy({ maxAttempts: 2, backoff, budget }).options).toMatchObject({ backoff, budget });
    const s = new RetryStrategy({
      maxAttempts: 2,
      backoff: { base: '1s', max: '1m', jitter: 'full' },
      budget: { ratio: 0.1, minThroughput: 20 },
      retryOn: ['throttled', 'concurrency'],
    });
    expect(s.options.backoff.options).toEqual({ base: 1000, max: 60_000, multiplier: 2, jitter: 'full' });
    expect(s.options.budget?.options).toEqual({ ratio: 0.1, minThroughput: 20 });
    expect(s.retries('throttled')).toBe(true);
    expect(s.retries('infrastructure')).toBe(false);
  });

  it('reports violations of nested options under their path', () => {
    expect(
      violations(
        () =>
          new RetryStrategy({
            maxAttempts: 0,
            backoff: { base: 0, max: 1 },
            retryOn: ['infrastructure', 'validation' as never],
            budget: { ratio: 2 },
          }),
      ),
    ).toEqual([
      { path: 'maxAttempts', constraint: 'an integer ≥ 1', value: 0 },
      { path: 'backoff.base', constraint: 'a duration > 0', value: 0 },
      {
        path: 'retryOn[1]',
        constraint: "one of 'concurrency', 'infrastructure', 'throttled'",
        value: 'validation',
      },
      { path: 'budget.ratio', constraint: 'in (0, 1]', value: 2 },
    ]);
    expect(
      violations(() => new RetryStrategy({ maxAttempts: 1, retryOn: [], backoff: 5 as never }))?.map(
        (v) => v.path,
      ),
    ).toEqual(['backoff', 'retryOn']);
  });
});
