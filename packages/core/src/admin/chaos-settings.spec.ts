import { settle, setup } from '../__tests__/helpers';
import { policy, runtimeOf } from '../__tests__/kit';
import { ChaosStrategy } from '../strategies/chaos-strategy';
import { RetryStrategy } from '../strategies/retry-strategy';
import { TimeoutStrategy } from '../strategies/timeout-strategy';
import { chaosPatchViolations, chaosSettingsOf, resetChaosHere, setChaosHere } from './chaos-settings';

/** Run-time chaos settings (SPEC §14.3 `admin.setChaos`): patches, validation, the view, retunes. */

describe('chaos settings at run time', () => {
  it('switches chaos on and off on a policy without a ChaosStrategy, without rebuilding it', async () => {
    const { resilience, clock, ofType } = setup([policy('p', [new TimeoutStrategy({ timeout: 1000 })])]);
    const pr = await runtimeOf(resilience, 'p');
    expect(chaosSettingsOf(pr)).toBeUndefined();
    const policyBefore = pr.policy;

    setChaosHere(pr, { enabled: true, fault: { rate: 1, message: 'chaos drill' } });
    await expect(resilience.run(() => 'real', { policy: 'p' })).rejects.toThrow('chaos drill');
    expect(chaosSettingsOf(pr)).toEqual({ enabled: true, fault: { rate: 1, message: 'chaos drill' } });

    // Off: the injections stay configured, nothing is injected.
    setChaosHere(pr, { enabled: false });
    await expect(resilience.run(() => 'real', { policy: 'p' })).resolves.toBe('real');
    expect(chaosSettingsOf(pr)).toEqual({ enabled: false, fault: { rate: 1, message: 'chaos drill' } });
    expect(pr.chaosArmed).toBeUndefined();

    // On again with latency instead of the fault (null removes an injection).
    setChaosHere(pr, { enabled: true, fault: null, latency: { rate: 1, delay: 2000 } });
    const s = settle(resilience.run(() => 'real', { policy: 'p' }));
    await clock.advance(1000);
    expect(s.error).toMatchObject({ code: 'attempt_timeout' });
    expect(chaosSettingsOf(pr)).toEqual({ enabled: true, latency: { rate: 1, delay: 2000 } });
    expect(ofType('chaos_injected').map((e) => e.injection)).toEqual(['fault', 'latency']);
    expect(pr.policy).toBe(policyBefore);
    expect(clock.pendingTimers()).toBe(0);
  });

  it("changes a ChaosStrategy's settings; the view marks injections given as functions in code", async () => {
    const { resilience } = setup([
      policy('p', [
        new ChaosStrategy({
          fault: { rate: 0.5, error: () => new Error('x') },
          outcome: { rate: 0.25, result: () => 1 },
        }),
      ]),
    ]);
    const pr = await runtimeOf(resilience, 'p');
    expect(chaosSettingsOf(pr)).toEqual({
      enabled: false,
      fault: { rate: 0.5, custom: true },
      outcome: { rate: 0.25, custom: true },
    });
    setChaosHere(pr, { enabled: true, outcome: { rate: 1, value: { cached: true } } });
    expect(chaosSettingsOf(pr)).toEqual({
      enabled: true,
      fault: { rate: 0.5, custom: true },
      outcome: { rate: 1, value: { cached: true } },
    });
    setChaosHere(pr, { fault: null });
    await expect(resilience.run(() => 'real', { policy: 'p' })).resolves.toEqual({ cached: true });
    expect(chaosSettingsOf(pr)).toEqual({ enabled: true, outcome: { rate: 1, value: { cached: true } } });
    // The view is JSON.
    expect(JSON.parse(JSON.stringify(chaosSettingsOf(pr)))).toEqual(chaosSettingsOf(pr));
  });

  it('an invalid patch throws one configuration error naming every violation, and changes nothing', async () => {
    const { resilience } = setup([policy('p', [])]);
    const pr = await runtimeOf(resilience, 'p');
    setChaosHere(pr, { enabled: true, latency: { rate: 0.5, delay: 100 } });
    const before = pr.chaos;
    let error: unknown;
    try {
      setChaosHere(pr, {
        enabled: 1 as never,
        fault: { rate: 2, message: 'x', error: () => 1 } as never,
        latency: { rate: 0.5 } as never,
      });
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ kind: 'configuration', code: 'invalid_policy', policy: 'p' });
    expect((error as Error).message).toBe(
      "Invalid chaos settings for policy 'p': " +
        [
          'enabled must be a boolean, got 1',
          'fault.error must be a known fault option (rate, message), got a function',
          'fault.rate must be in [0, 1], got 2',
          'latency.delay must be a duration ≥ 0, got undefined',
        ].join('; '),
    );
    expect(pr.chaos).toBe(before);
  });

  it('chaosPatchViolations lists each problem as "field must be constraint, got value"', () => {
    expect(chaosPatchViolations({ enabled: true, fault: { rate: 0.1 }, latency: null })).toEqual([]);
    expect(
      chaosPatchViolations({ fault: { rate: 0.1, message: 'm' }, outcome: { rate: 1, value: null } }),
    ).toEqual([]);
    expect(
      chaosPatchViolations({
        enabled: 'on',
        mode: 'x',
        fault: 'everything',
        latency: { rate: -1, delay: '1 sec' },
        outcome: { rate: 0.1, result: 'r' },
      }),
    ).toEqual([
      "mode must be a known chaos setting (enabled, fault, latency, outcome), got 'x'",
      "enabled must be a boolean, got 'on'",
      "fault must be an object, got 'everything'",
      'fault.rate must be in [0, 1], got undefined',
      'latency.rate must be in [0, 1], got -1',
      "latency.delay must be a duration ≥ 0, got '1 sec'",
      "outcome.result must be a known outcome option (rate, value), got 'r'",
    ]);
    expect(chaosPatchViolations(null)).toEqual(['options must be an object, got null']);
  });

  it("a retune keeps an operator's settings; resetChaosHere goes back to the policy's own", async () => {
    const { resilience } = setup([policy('p', [new ChaosStrategy({ latency: { rate: 0.1, delay: 5 } })])]);
    const pr = await runtimeOf(resilience, 'p');
    setChaosHere(pr, { enabled: true, fault: { rate: 1, message: 'drill' } });
    await resilience.admin.retune({ name: 'p', strategies: [{ type: 'retry', maxAttempts: 2 }] });
    const next = await runtimeOf(resilience, 'p');
    expect(next).not.toBe(pr);
    expect(next.policy.retry).toBeInstanceOf(RetryStrategy);
    expect(chaosSettingsOf(next)).toEqual({
      enabled: true,
      fault: { rate: 1, message: 'drill' },
      latency: { rate: 0.1, delay: 5 },
    });
    await expect(resilience.run(() => 1, { policy: 'p' })).rejects.toThrow('drill');
    resetChaosHere(next);
    expect(chaosSettingsOf(next)).toBeUndefined();
    await expect(resilience.run(() => 1, { policy: 'p' })).resolves.toBe(1);
    // Without an operator's change, a retune takes the new policy's chaos settings.
    await resilience.admin.retune({
      name: 'p',
      strategies: [{ type: 'chaos', enabled: true, outcome: { rate: 1, value: 'v' } }],
    });
    const third = await runtimeOf(resilience, 'p');
    expect(chaosSettingsOf(third)).toEqual({ enabled: true, outcome: { rate: 1, value: 'v' } });
    await expect(resilience.run(() => 1, { policy: 'p' })).resolves.toBe('v');
  });
});
