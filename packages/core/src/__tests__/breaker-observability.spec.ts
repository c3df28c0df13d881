import type { Resilience } from '../resilience';
import { infraError, setup } from './helpers';
import { breaker, errorOf, policy } from './kit';

/*
 * What an operator learns about a breaker (SPEC §5 events, §6 admin.inspect): why it opened — the failure ratio and
 * calls of the outcomes that opened it, in the `breaker_state` event and in the snapshot while open and half-open —
 * and when it may half-open (`retryAfter`, relative ms, open only).
 */

const fail = (r: Resilience, route?: string) =>
  r.run(() => Promise.reject(infraError()), { policy: 'p', route }).catch((e: unknown) => e);
const succeed = (r: Resilience) => r.run(() => 'ok', { policy: 'p' });
const state = async (r: Resilience) => (await r.admin.inspect({ policy: 'p' }))[0]?.breaker;

describe('breaker observability: admin.inspect', () => {
  it('an open breaker shows the ratio and calls that tripped it and the ms until it may half-open', async () => {
    const { resilience, clock } = setup([policy('p', [breaker({ minThroughput: 4, breakDuration: '5s' })])]);
    await succeed(resilience);
    for (let i = 0; i < 3; i++) await fail(resilience);
    expect(await state(resilience)).toEqual({
      state: 'open',
      failureRatio: 0.75,
      calls: 4,
      retryAfter: 5000,
    });
    await clock.advance(1500);
    expect(await state(resilience)).toEqual({
      state: 'open',
      failureRatio: 0.75,
      calls: 4,
      retryAfter: 3500,
    });
    // the same wait a call refused at this moment is given
    expect(await errorOf(succeed(resilience))).toMatchObject({ code: 'circuit_open', retryAfter: 3500 });
    await resilience.admin.resetBreaker('p'); // forgets what opened it
    expect(await state(resilience)).toEqual({ state: 'closed', failureRatio: 0, calls: 0 });
  });

  it('half-open keeps showing what opened it, with no retryAfter; closing empties the window', async () => {
    const { resilience, clock } = setup([policy('p', [breaker({ minThroughput: 2, breakDuration: '5s' })])]);
    await fail(resilience);
    await fail(resilience);
    await clock.advance(5000);
    expect(await state(resilience)).toEqual({ state: 'half_open', failureRatio: 1, calls: 2 });
    await succeed(resilience); // the probe closes it
    expect(await state(resilience)).toEqual({ state: 'closed', failureRatio: 0, calls: 0 });
  });

  it('after a failed probe: the probes of that half-open period, and a fresh break', async () => {
    const { resilience, clock } = setup([
      policy('p', [breaker({ minThroughput: 2, breakDuration: '5s', halfOpenMaxCalls: 2 })]),
    ]);
    await fail(resilience);
    await fail(resilience);
    await clock.advance(5000);
    await succeed(resilience);
    await clock.advance(10);
    await fail(resilience);
    expect(await state(resilience)).toEqual({ state: 'open', failureRatio: 0.5, calls: 2, retryAfter: 5000 });
  });
});

describe('breaker observability: breaker_state events', () => {
  it('closed → open and half-open → open carry failureRatio and calls; other moves carry neither', async () => {
    const { resilience, clock, ofType } = setup([
      policy('p', [breaker({ minThroughput: 4, breakDuration: '5s', halfOpenMaxCalls: 3 })]),
    ]);
    await succeed(resilience);
    await succeed(resilience);
    await fail(resilience);
    await fail(resilience);
    await clock.advance(5000);
    await succeed(resilience);
    await fail(resilience); // one success and this failure: 1 / 2 of the period's probes failed
    await clock.advance(5000);
    for (let i = 0; i < 3; i++) await succeed(resilience);
    const base = { type: 'breaker_state', policy: 'p', route: undefined } as const;
    expect(ofType('breaker_state')).toEqual([
      { ...base, from: 'closed', to: 'open', failureRatio: 0.5, calls: 4 },
      { ...base, from: 'open', to: 'half_open' },
      { ...base, from: 'half_open', to: 'open', failureRatio: 0.5, calls: 2 },
      { ...base, from: 'open', to: 'half_open' },
      { ...base, from: 'half_open', to: 'closed' },
    ]);
  });

  it('a stream that trips the breaker reports the same numbers', async () => {
    const { resilience, ofType } = setup([policy('p', [breaker({ minThroughput: 3 })])]);
    (await resilience.admitStream('p')).settle();
    (await resilience.admitStream('p')).settle(infraError());
    (await resilience.admitStream('p')).settle(infraError());
    expect(ofType('breaker_state')).toEqual([
      {
        type: 'breaker_state',
        policy: 'p',
        route: undefined,
        from: 'closed',
        to: 'open',
        failureRatio: 2 / 3,
        calls: 3,
      },
    ]);
  });
});
