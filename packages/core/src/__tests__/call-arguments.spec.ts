import { bindCriticality, Criticality } from '../context/criticality';
import { withDeadline } from '../context/deadline';
import { ResiliencePolicy } from '../policy/resilience-policy';
import { Resilience as ResilienceClass } from '../resilience';
import { TimeoutStrategy } from '../strategies/timeout-strategy';
import { errorOf } from './kit';
import { setup } from './helpers';

/**
 * `run` and `admitStream` called with bad arguments, as JavaScript callers and configuration-driven code can: one
 * `configuration` rejection naming each bad argument, its constraint and the value given — never a synchronous
 * throw, never a TypeError from inside the pipeline, and nothing started.
 */
describe('call arguments', () => {
  const policies = () => [
    new ResiliencePolicy({ name: 'p', strategies: [new TimeoutStrategy({ timeout: 100 })] }),
  ];
  /** `run` reached without the type checker, as plain JavaScript calls it. */
  const untypedRun = (r: ResilienceClass, fn: unknown, options?: unknown): Promise<unknown> =>
    (r.run as (fn: unknown, options: unknown) => Promise<unknown>)(fn, options);

  it('rejects a non-function fn (a rejection, not a throw), naming it', async () => {
    const { resilience, clock, events } = setup(policies());
    let returned: Promise<unknown> | undefined;
    expect(() => {
      returned = untypedRun(resilience, 'charge', { policy: 'p' });
    }).not.toThrow();
    const error = await errorOf(returned!);
    expect(error).toMatchObject({
      kind: 'configuration',
      code: 'configuration',
      policy: 'p',
      message: "Invalid run() call: fn must be a function, got 'charge'",
    });
    expect(events).toEqual([]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('rejects missing or non-object options', async () => {
    const { resilience } = setup(policies());
    await expect(untypedRun(resilience, () => 1)).rejects.toMatchObject({
      kind: 'configuration',
      message: 'Invalid run() call: options must be an object naming a policy, got undefined',
    });
    await expect(untypedRun(resilience, () => 1, 'p')).rejects.toMatchObject({
      message: "Invalid run() call: options must be an object naming a policy, got 'p'",
    });
  });

  it('reports every bad option together, and never calls fn', async () => {
    const { resilience, clock } = setup(policies());
    let calls = 0;
    const error = await errorOf(
      untypedRun(resilience, () => ++calls, {
        policy: 'p',
        route: 7,
        signal: { aborted: false },
        fallback: 'cached',
        hedge: 'no',
      }),
    );
    expect(error).toMatchObject({ kind: 'configuration', code: 'configuration', policy: 'p' });
    expect((error as Error).message).toBe(
      'Invalid run() call: options.route must be a string or undefined, got 7; ' +
        'options.signal must be an AbortSignal or undefined, got { aborted: false }; ' +
        "options.fallback must be a function or undefined, got 'cached'; " +
        "options.hedge must be a boolean or undefined, got 'no'",
    );
    expect((error as { details?: { problems?: unknown[] } }).details?.problems).toHaveLength(4);
    expect(calls).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('names a policy that is not a string, and lists an unknown name with the other faults', async () => {
    const { resilience } = setup(policies());
    await expect(untypedRun(resilience, () => 1, { policy: 5 })).rejects.toMatchObject({
      kind: 'configuration',
      code: 'configuration',
      message: 'Invalid run() call: options.policy must be the name of a registered policy, got 5',
    });
    await expect(untypedRun(resilience, () => 1, { policy: 'nope', route: 5 })).rejects.toMatchObject({
      code: 'configuration',
      policy: 'nope',
      message:
        "Invalid run() call: options.route must be a string or undefined, got 5; options.policy names no registered policy: 'nope'",
    });
  });

  it('keeps unknown_policy when the name is the only fault', async () => {
    const { resilience } = setup(policies());
    await expect(resilience.run(() => 1, { policy: 'nope', route: 'r' })).rejects.toMatchObject({
      kind: 'configuration',
      code: 'unknown_policy',
      message: "Unknown policy 'nope'",
      policy: 'nope',
      route: 'r',
    });
  });

  it('accepts a signal that is not Node’s own AbortSignal but behaves like one (a polyfill, another realm)', async () => {
    const { resilience } = setup(policies());
    const target = new EventTarget();
    const signal = Object.assign(target, { aborted: false, reason: undefined });
    await expect(
      resilience.run(() => 'ok', { policy: 'p', signal: signal as unknown as AbortSignal }),
    ).resolves.toBe('ok');
  });

  it('admitStream rejects a bad route or options and keeps unknown_policy for an unknown name', async () => {
    const { resilience } = setup(policies());
    const untyped = resilience.admitStream.bind(resilience) as (p: unknown, o?: unknown) => Promise<unknown>;
    await expect(untyped('p', { route: 3 })).rejects.toMatchObject({
      kind: 'configuration',
      message: 'Invalid admitStream() call: options.route must be a string or undefined, got 3',
    });
    await expect(untyped('p', null)).rejects.toMatchObject({
      message: 'Invalid admitStream() call: options must be an object ({ route? }) or undefined, got null',
    });
    await expect(untyped(undefined)).rejects.toMatchObject({
      message: 'Invalid admitStream() call: policy must be the name of a registered policy, got undefined',
    });
    await expect(untyped('nope')).rejects.toMatchObject({ code: 'unknown_policy' });
    const permit = (await untyped('p', { route: 'r' })) as { settle(error?: unknown): void };
    expect(typeof permit.settle).toBe('function');
    permit.settle();
  });

  it('admin operations reject a route or policy that is not a string instead of acting on a key of its own', async () => {
    const { resilience } = setup(policies());
    const admin = resilience.admin as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    for (const method of ['forceOpen', 'clearForcedOpen', 'resetBreaker']) {
      await expect(admin[method]!('p', 7)).rejects.toMatchObject({
        kind: 'configuration',
        message: `Invalid admin.${method}() call: route must be a string or undefined, got 7`,
      });
      await expect(admin[method]!({ name: 'p' })).rejects.toMatchObject({
        message: `Invalid admin.${method}() call: policy must be a policy name, got { name: 'p' }`,
      });
    }
    await expect(admin['inspect']!('p')).rejects.toMatchObject({
      message: "Invalid admin.inspect() call: filter must be an object ({ policy? }) or undefined, got 'p'",
    });
    await expect(admin['inspect']!({ policy: 3 })).rejects.toMatchObject({
      message: 'Invalid admin.inspect() call: policy must be a policy name, got 3',
    });
    // Nothing was forced or created by the refused calls.
    expect(await resilience.admin.inspect()).toEqual([]);
    await expect(resilience.run(() => 'ok', { policy: 'p', route: '7' })).resolves.toBe('ok');
  });

  it('withDeadline and bindCriticality name a fn that is not a function', () => {
    expect(() => withDeadline('1s', 5 as never)).toThrow(
      expect.objectContaining({
        kind: 'configuration',
        message: 'Invalid withDeadline() call: fn must be a function, got 5',
      }),
    );
    expect(() => bindCriticality(Criticality.CRITICAL, 'x' as never)).toThrow(
      expect.objectContaining({
        kind: 'configuration',
        message: "Invalid bindCriticality() call: fn must be a function, got 'x'",
      }),
    );
  });

  it('new Resilience reports policies that are not an array instead of crashing on them', () => {
    expect(() => new ResilienceClass({ policies: {} as never, maxKeysPerPolicy: 0 })).toThrow(
      'Invalid Resilience options: policies must be an array of ResiliencePolicy, got {}; maxKeysPerPolicy must be an integer ≥ 1, got 0',
    );
  });
});
