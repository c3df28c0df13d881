import 'reflect-metadata';
import { currentCriticality, remainingTime } from '@ballast/core';
import { FakeClock } from '@ballast/testing';
import { inScope, parseBudget } from './request-scope';

describe('parseBudget', () => {
  it('reads non-negative milliseconds and ignores anything malformed or absurd', () => {
    expect(
      ['250', ' 40 ', '0', '12.5', '-1', '1e3', 'soon', '', '86400001', undefined].map(parseBudget),
    ).toEqual([250, 40, 0, 12.5, undefined, undefined, undefined, undefined, undefined, undefined]);
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
