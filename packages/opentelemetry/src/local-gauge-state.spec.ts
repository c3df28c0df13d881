import type { ResilienceStateSnapshot } from '@ballast/core';
import { LocalGaugeState, type LocalKeyState } from './local-gauge-state';

const snap = (
  route: string,
  extra: Omit<Partial<ResilienceStateSnapshot>, 'mode'> = {},
): ResilienceStateSnapshot => ({
  policy: 'p',
  route,
  forcedOpen: false,
  version: 0,
  mode: 'enforce',
  ...extra,
});
const closed = { state: 'closed', failureRatio: 0, calls: 0 } as const;

function entries(
  local: LocalGaugeState,
): Record<string, Pick<LocalKeyState, 'breaker' | 'concurrencyLimit'>> {
  const out: Record<string, Pick<LocalKeyState, 'breaker' | 'concurrencyLimit'>> = {};
  local.forEach((policy, route, s) => {
    out[`${policy}/${route ?? '-'}`] = { breaker: s.breaker, concurrencyLimit: s.concurrencyLimit };
  });
  return out;
}

describe('LocalGaugeState', () => {
  it('starts from an answered inspect and follows breaker transitions and limit changes', () => {
    const local = new LocalGaugeState();
    local.apply(
      [snap('a', { breaker: closed, concurrencyLimit: 8 }), snap('b', { breaker: closed })],
      local.mark(),
    );
    local.onEvent({ type: 'breaker_state', policy: 'p', route: 'a', from: 'closed', to: 'open' });
    local.onEvent({ type: 'bulkhead_limit', policy: 'p', route: 'a', limit: 7 });
    local.onEvent({ type: 'breaker_state', policy: 'q', route: undefined, from: 'closed', to: 'open' });
    expect(entries(local)).toEqual({
      'p/a': { breaker: 'open', concurrencyLimit: 7 },
      'p/b': { breaker: 'closed', concurrencyLimit: undefined },
      'q/-': { breaker: 'open', concurrencyLimit: undefined },
    });
  });

  it('an answer replaces only what was known when its inspect started: later events win, evicted keys go', () => {
    const local = new LocalGaugeState();
    local.apply([snap('a', { breaker: closed }), snap('gone', { breaker: closed })], local.mark());
    local.onEvent({ type: 'breaker_state', policy: 'p', route: 'old', from: 'closed', to: 'open' });
    const mark = local.mark(); // an inspect starts
    local.onEvent({ type: 'breaker_state', policy: 'p', route: 'a', from: 'closed', to: 'open' });
    local.onEvent({ type: 'bulkhead_limit', policy: 'p', route: 'new', limit: 3 });
    // …and answers with what it read before those events; 'gone' and 'old' were evicted meanwhile.
    local.apply([snap('a', { breaker: closed, concurrencyLimit: 5 })], mark);
    expect(entries(local)).toEqual({
      'p/a': { breaker: 'open', concurrencyLimit: 5 },
      'p/new': { breaker: undefined, concurrencyLimit: 3 },
    });
  });

  it('bounds the keys first seen through events; an answered inspect starts over', () => {
    const local = new LocalGaugeState(2);
    for (const route of ['a', 'b', 'c']) {
      local.onEvent({ type: 'breaker_state', policy: 'p', route, from: 'closed', to: 'open' });
    }
    expect(Object.keys(entries(local))).toEqual(['p/a', 'p/b']);
    local.onEvent({ type: 'breaker_state', policy: 'p', route: 'b', from: 'open', to: 'half_open' });
    expect(entries(local)['p/b']?.breaker).toBe('half_open');
    local.apply([snap('c', { breaker: closed })], local.mark());
    expect(Object.keys(entries(local))).toEqual(['p/c']);
  });
});
