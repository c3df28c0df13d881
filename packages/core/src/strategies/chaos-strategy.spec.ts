import { ResilienceError } from '../errors/resilience-error';
import { policyFromSpec, policyToSpec, type PolicySpec } from '../policy/policy-spec';
import { ResiliencePolicy } from '../policy/resilience-policy';
import { violationsOf } from '../validation/options-validator';
import { ChaosStrategy, DEFAULT_CHAOS_FAULT_MESSAGE } from './chaos-strategy';
import { RetryStrategy } from './retry-strategy';
import { TimeoutStrategy } from './timeout-strategy';

/** ChaosStrategy options, its place in a policy, and its JSON form (SPEC §14.3, §11.15). */

function messagesOf(build: () => unknown): string[] {
  try {
    build();
  } catch (e) {
    const violations = violationsOf(e);
    if (violations === undefined) throw e;
    return violations.map((v) => `${v.path} must be ${v.constraint}`);
  }
  throw new Error('expected a configuration error');
}

describe('ChaosStrategy options', () => {
  it('defaults: disabled, no injection; resolved and frozen', () => {
    const s = new ChaosStrategy();
    expect(s.type).toBe('chaos');
    expect(s.options).toEqual({ enabled: false, fault: undefined, latency: undefined, outcome: undefined });
    expect(Object.isFrozen(s)).toBe(true);
    expect(Object.isFrozen(s.options)).toBe(true);
  });

  it('resolves each injection: durations in ms, the data forms of fault and outcome', () => {
    const error = () => new Error('x');
    const s = new ChaosStrategy({
      enabled: true,
      fault: { rate: 0.1 },
      latency: { rate: 0, delay: '1.5s' },
      outcome: { rate: 1, value: null },
    });
    expect(s.options).toEqual({
      enabled: true,
      fault: { rate: 0.1, error: undefined, message: DEFAULT_CHAOS_FAULT_MESSAGE },
      latency: { rate: 0, delay: 1500 },
      outcome: { rate: 1, result: undefined, value: null },
    });
    expect(new ChaosStrategy({ fault: { rate: 1, error } }).options.fault).toEqual({
      rate: 1,
      error,
      message: undefined,
    });
  });

  it('reports every violation in one configuration error naming field, constraint and value', () => {
    let error: unknown;
    try {
      new ChaosStrategy({
        enabled: 'yes' as never,
        fault: { rate: 1.5, error: 'boom' as never, message: 'also' },
        latency: { rate: -0.1, delay: Infinity },
        outcome: { rate: Number.NaN, result: () => 1, value: 2 },
        extra: 1,
      } as never);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ResilienceError);
    expect(error).toMatchObject({ kind: 'configuration', code: 'invalid_policy' });
    expect((error as Error).message).toBe(
      'Invalid ChaosStrategy options: ' +
        [
          'extra must be a known chaos option (enabled, fault, latency, outcome), got 1',
          "enabled must be a boolean, got 'yes'",
          'fault.rate must be in [0, 1], got 1.5',
          "fault.error must be a function () => error, got 'boom'",
          "fault.message must be absent when error is given (one or the other), got 'also'",
          'latency.rate must be in [0, 1], got -0.1',
          'latency.delay must be a duration ≥ 0, got Infinity',
          'outcome.rate must be in [0, 1], got NaN',
          'outcome.value must be absent when result is given (one or the other), got 2',
        ].join('; '),
    );
    expect(
      messagesOf(
        () =>
          new ChaosStrategy({
            fault: { rate: 0, message: 3 as never, typo: 1 } as never,
            latency: { rate: 1, delay: '-1s' },
            outcome: 'x' as never,
          }),
      ),
    ).toEqual([
      'fault.typo must be a known fault option (rate, error, message)',
      'fault.message must be a string',
      'latency.delay must be a duration ≥ 0',
      'outcome must be an object',
      'outcome.rate must be in [0, 1]',
    ]);
  });
});

describe('ChaosStrategy in a policy', () => {
  it('is innermost whatever the order given, inside the timeout', () => {
    const p = new ResiliencePolicy({
      name: 'p',
      strategies: [
        new ChaosStrategy(),
        new TimeoutStrategy({ timeout: 100 }),
        new RetryStrategy({ maxAttempts: 2 }),
      ],
    });
    expect(p.strategies.map((s) => s.type)).toEqual(['retry', 'timeout', 'chaos']);
    expect(p.chaos).toBe(p.strategies[2]);
  });

  it('one chaos strategy per policy', () => {
    expect(
      messagesOf(
        () => new ResiliencePolicy({ name: 'p', strategies: [new ChaosStrategy(), new ChaosStrategy()] }),
      ),
    ).toEqual(['strategies[1] must be the only chaos strategy (strategies[0] is one already)']);
  });
});

describe('ChaosStrategy JSON form', () => {
  const spec: PolicySpec = {
    name: 'orders',
    strategies: [
      { type: 'timeout', timeout: 1000 },
      {
        type: 'chaos',
        enabled: true,
        fault: { rate: 0.1, message: 'db down (chaos)' },
        latency: { rate: 0.1, delay: '200ms' },
        outcome: { rate: 0.05, value: { items: [] } },
      },
    ],
  };

  it('round-trips: policyFromSpec(policyToSpec(p)) equals p, through JSON', () => {
    const p = policyFromSpec(spec);
    expect(p.chaos?.options).toEqual({
      enabled: true,
      fault: { rate: 0.1, error: undefined, message: 'db down (chaos)' },
      latency: { rate: 0.1, delay: 200 },
      outcome: { rate: 0.05, result: undefined, value: { items: [] } },
    });
    const written = policyToSpec(p);
    expect(written.strategies[1]).toEqual({
      type: 'chaos',
      enabled: true,
      fault: { rate: 0.1, message: 'db down (chaos)' },
      latency: { rate: 0.1, delay: 200 },
      outcome: { rate: 0.05, value: { items: [] } },
    });
    const again = policyFromSpec(JSON.parse(JSON.stringify(written)));
    expect(again).toStrictEqual(p);
    expect(policyToSpec(again)).toStrictEqual(written);
    // Defaults are written out: a bare chaos entry is a disabled one.
    expect(policyToSpec(policyFromSpec({ name: 'q', strategies: [{ type: 'chaos' }] })).strategies).toEqual([
      { type: 'chaos', enabled: false },
    ]);
  });

  it('leaves out injections given as functions in code (no JSON form), as it does a fallback', () => {
    const p = new ResiliencePolicy({
      name: 'code',
      strategies: [
        new ChaosStrategy({
          enabled: true,
          fault: { rate: 0.5, error: () => new Error('x') },
          latency: { rate: 0.5, delay: 10 },
          outcome: { rate: 0.5, result: () => 1 },
        }),
      ],
    });
    expect(policyToSpec(p).strategies).toEqual([
      { type: 'chaos', enabled: true, latency: { rate: 0.5, delay: 10 } },
    ]);
  });

  it('refuses functions and nulls in a spec, all violations at once; null is data as an outcome value', () => {
    expect(
      messagesOf(() =>
        policyFromSpec({
          name: 'p',
          strategies: [
            {
              type: 'chaos',
              enabled: null,
              fault: { rate: 2, error: () => 1 },
              latency: { rate: null, delay: 5 },
              outcome: { rate: 0.5, result: () => 1 },
            },
            { type: 'chaos' },
          ],
        }),
      ),
    ).toEqual([
      'strategies[0].enabled must be a value, or absent (null is not accepted)',
      'strategies[0].fault.error must be absent: a function cannot be expressed in JSON (give message)',
      'strategies[0].outcome.result must be absent: a function cannot be expressed in JSON (give value)',
      'strategies[0].latency.rate must be a value, or absent (null is not accepted)',
      'strategies[0].enabled must be a boolean',
      'strategies[0].fault.rate must be in [0, 1]',
      'strategies[0].latency.rate must be in [0, 1]',
      'strategies[1] must be the only chaos strategy (strategies[0] is one already)',
    ]);
    const p = policyFromSpec({
      name: 'p',
      strategies: [{ type: 'chaos', outcome: { rate: 1, value: null } }],
    });
    expect(p.chaos?.options.outcome).toEqual({ rate: 1, result: undefined, value: null });
    expect(policyToSpec(p).strategies).toEqual([
      { type: 'chaos', enabled: false, outcome: { rate: 1, value: null } },
    ]);
  });
});
