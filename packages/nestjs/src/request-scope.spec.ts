import 'reflect-metadata';
import { currentCriticality, remainingTime } from '@ballast/core';
import { FakeClock } from '@ballast/testing';
import { MALFORMED, inScope, parseBudget } from './request-scope';

describe('parseBudget', () => {
  it('reads milliseconds (a budget ≤ 0 included: the caller gave up), caps large ones, flags anything malformed', () => {
    const values = [
      '250',
      ' 40 ',
      '0',
      '12.5',
      '-1',
      '-5',
      '1e3',
      'soon',
      '',
      'Infinity',
      '86400001',
      undefined,
    ];
    expect(values.map((v) => parseBudget(v))).toEqual([
      250,
      40,
      0,
      12.5,
      -1,
      -5,
      MALFORMED,
      MALFORMED,
      MALFORMED,
      MALFORMED,
      86_400_000,
      undefined,
    ]);
  });

  it('caps at the configured maximum, also 10 kB of digits', () => {
    expect(parseBudget('5000', 2000)).toBe(2000);
    expect(parseBudget('9'.repeat(10_000), 2000)).toBe(2000);
    expect(parseBudget('1500', 2000)).toBe(1500);
  });
});

describe('inScope', () => {
  it('binds the deadline on the given clock and the criticality, only when present', () => {
    const clock = new FakeClock(1000);
    const read = () => ({ remaining: remainingTime(), level: currentCriticality() });
    expect(inScope(undefined, undefined, clock, read)).toEqual({ remaining: undefined, level: 2 });
    expect(inScope(300, undefined, clock, read)).toEqual({ remaining: 300, level: 2 });
    expect(inScope(undefined, 0, clock, read)).toEqual({ remaining: undefined, level: 0 });
    expect(inScope(50, 3, clock, read)).toEqual({ remaining: 50, level: 3 });
  });
});
