import fc from 'fast-check';
import { policyFromSpec, policyToSpec } from '../policy/policy-spec';
import { CircuitBreakerStrategy } from '../strategies/circuit-breaker-strategy';
import { infraError, settle, setup } from './helpers';
import { breaker, policy } from './kit';

/** Growing breaks (SPEC §14.3) through `run()` on the FakeClock: 1 s, 2 s, 4 s, the cap, reset on close. */

const failing = (): Promise<never> => Promise.reject(infraError());

function growing(o: Parameters<typeof breaker>[0] = {}) {
  return setup([
    policy('p', [breaker({ minThroughput: 2, breakDuration: '1s', maxBreakDuration: '5s', ...o })]),
  ]);
}

describe('circuit breaker: growing breaks', () => {
  it('each failed probe doubles the break (1 s, 2 s, 4 s), capped at maxBreakDuration; a close resets it', async () => {
    const { resilience, clock, ofType } = growing();
    const run = (fn: () => unknown) => settle(resilience.run(fn, { policy: 'p' }));
    run(failing);
    run(failing);
    await clock.advance(0);
    const opened: number[] = [clock.now()];
    // at each break's last ms the breaker still rejects; at its end the probe fails and the break grows
    for (const length of [1000, 2000, 4000, 5000, 5000]) {
      await clock.advance(length - 1);
      const early = run(() => 'never');
      await clock.advance(0);
      expect(early.error).toMatchObject({ code: 'circuit_open', retryAfter: 1 });
      await clock.advance(1);
      run(failing);
      await clock.advance(0);
      opened.push(clock.now());
    }
    expect(opened).toEqual([0, 1000, 3000, 7000, 12000, 17000]);
    // the probe after the capped break succeeds: closed, and the next trip lasts breakDuration again
    await clock.advance(5000);
    const probe = run(() => 'ok');
    await clock.advance(0);
    expect(probe.value).toBe('ok');
    run(failing);
    run(failing);
    await clock.advance(0);
    expect((await resilience.admin.inspect({ policy: 'p' }))[0]).toMatchObject({
      breaker: { state: 'open', retryAfter: 1000 },
    });
    expect(ofType('breaker_state').map((e) => e.to)).toEqual([
      ...['open', 'half_open', 'open', 'half_open', 'open', 'half_open', 'open'],
      ...['half_open', 'open', 'half_open', 'open', 'half_open', 'closed', 'open'],
    ]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('without maxBreakDuration every break lasts breakDuration, as before', async () => {
    const { resilience, clock } = setup([policy('p', [breaker({ minThroughput: 2, breakDuration: '1s' })])]);
    const run = (fn: () => unknown) => settle(resilience.run(fn, { policy: 'p' }));
    run(failing);
    run(failing);
    for (let i = 0; i < 4; i++) {
      await clock.advance(1000);
      run(failing);
      await clock.advance(0);
      const rejected = run(() => 'never');
      await clock.advance(0);
      expect(rejected.error).toMatchObject({ code: 'circuit_open', retryAfter: 1000 });
    }
  });

  it('property: the n-th consecutive break lasts min(max, breakDuration · multiplier^n)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 2000 }),
        fc.double({ min: 1, max: 4, noNaN: true }),
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 1, max: 6 }),
        async (base, multiplier, capFactor, failedProbes) => {
          const max = base * capFactor;
          const { resilience, clock } = setup([
            policy('p', [
              breaker({
                minThroughput: 1,
                breakDuration: base,
                maxBreakDuration: max,
                breakDurationMultiplier: multiplier,
              }),
            ]),
          ]);
          settle(resilience.run(failing, { policy: 'p' }));
          await clock.advance(0);
          let expected = base;
          for (let i = 0; i < failedProbes; i++) {
            await clock.advance(expected);
            settle(resilience.run(failing, { policy: 'p' }));
            await clock.advance(0);
            expected = Math.min(max, expected * multiplier);
            const [s] = await resilience.admin.inspect({ policy: 'p' });
            expect(s!.breaker?.state).toBe('open');
            // openUntil − now: the sum and difference round in the last bits
            expect(s!.breaker?.retryAfter).toBeCloseTo(expected, 6);
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('validates the new options with the others; the JSON spec and policyToSpec carry them', () => {
    expect(
      () =>
        new CircuitBreakerStrategy({
          failureRatio: 2,
          samplingWindow: '10s',
          minThroughput: 1,
          breakDuration: '2s',
          maxBreakDuration: '1s',
          breakDurationMultiplier: 0.5,
        }),
    ).toThrow(
      /failureRatio must be in \(0, 1\], got 2; maxBreakDuration must be ≥ breakDuration \(2000 ms\), got '1s'; breakDurationMultiplier must be ≥ 1, got 0.5$/,
    );
    expect(() => breaker({ breakDurationMultiplier: 3 })).toThrow(
      /breakDurationMultiplier must be set only with maxBreakDuration, got 3/,
    );
    expect(() => breaker({ maxBreakDuration: 'soon' })).toThrow(
      /maxBreakDuration must be a duration > 0, got 'soon'/,
    );
    // the default multiplier alone is accepted (a spread of resolved options carries it)
    expect(breaker({ ...breaker().options }).options.maxBreakDuration).toBeUndefined();
    const grown = policy('p', [breaker({ maxBreakDuration: '1m', breakDurationMultiplier: 1.5 })]);
    const spec = policyToSpec(grown);
    expect(spec.strategies[0]).toMatchObject({ maxBreakDuration: 60_000, breakDurationMultiplier: 1.5 });
    expect(policyFromSpec(JSON.parse(JSON.stringify(spec)))).toEqual(grown);
    const plain = policyToSpec(policy('p', [breaker()]));
    expect(plain.strategies[0]).not.toHaveProperty('breakDurationMultiplier');
    expect(plain.strategies[0]).not.toHaveProperty('maxBreakDuration');
    expect(() =>
      policyFromSpec({
        name: 'p',
        strategies: [{ ...plain.strategies[0], maxBreakDuration: 10 }],
      }),
    ).toThrow(/strategies\[0\]\.maxBreakDuration must be ≥ breakDuration \(5000 ms\), got 10/);
  });
});
