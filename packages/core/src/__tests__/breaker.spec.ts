import { ResilienceError } from '../errors/resilience-error';
import type { Resilience } from '../resilience';
import { deferred, infraError, settle, setup } from './helpers';
import { breaker, codeOf, errorOf, hang, kindError, policy } from './kit';

/** Circuit breaker rules of SPEC §4 / §11.9, all through `run()`. */

const fail = (r: Resilience, route?: string) =>
  r.run(() => Promise.reject(infraError()), { policy: 'p', route }).catch((e: unknown) => e);
const succeed = (r: Resilience, route?: string) => r.run(() => 'ok', { policy: 'p', route });
const state = async (r: Resilience) => (await r.admin.inspect({ policy: 'p' }))[0]?.breaker;

describe('breaker: tripping', () => {
  it('never trips below minThroughput, then trips on the call that reaches it', async () => {
    const { resilience, ofType } = setup([policy('p', [breaker({ minThroughput: 4, failureRatio: 0.5 })])]);
    for (let i = 0; i < 3; i++) await fail(resilience);
    expect(await state(resilience)).toEqual({ state: 'closed', failureRatio: 1, calls: 3 });
    await fail(resilience);
    expect((await state(resilience))?.state).toBe('open');
    expect(ofType('breaker_state')).toEqual([
      {
        type: 'breaker_state',
        policy: 'p',
        route: undefined,
        from: 'closed',
        to: 'open',
        failureRatio: 1,
        calls: 4,
      },
    ]);
  });

  it('trips at exactly the ratio (≥), not below it', async () => {
    const below = setup([policy('p', [breaker({ minThroughput: 4, failureRatio: 0.5 })])]);
    await succeed(below.resilience);
    await succeed(below.resilience);
    await succeed(below.resilience);
    await fail(below.resilience);
    expect((await state(below.resilience))?.state).toBe('closed'); // 0.25 < 0.5

    const at = setup([policy('p', [breaker({ minThroughput: 4, failureRatio: 0.5 })])]);
    await succeed(at.resilience);
    await fail(at.resilience);
    await succeed(at.resilience);
    await fail(at.resilience);
    expect((await state(at.resilience))?.state).toBe('open'); // 2/4 = 0.5 ≥ 0.5
  });

  it('an open breaker rejects at once with infrastructure / circuit_open, retryAfter, policy and route; fn never runs', async () => {
    const { resilience, clock, ofType } = setup([policy('p', [breaker({ minThroughput: 1 })])]);
    await fail(resilience, 'r');
    await clock.advance(1500);
    let ran = false;
    const err = await errorOf(resilience.run(() => (ran = true), { policy: 'p', route: 'r' }));
    expect(ran).toBe(false);
    expect(err).toBeInstanceOf(ResilienceError);
    expect(err).toMatchObject({
      kind: 'infrastructure',
      code: 'circuit_open',
      retryable: true,
      retryAfter: 3500,
      policy: 'p',
      route: 'r',
    });
    expect(ofType('rejected')).toEqual([
      { type: 'rejected', policy: 'p', route: 'r', code: 'circuit_open', retryAfter: 3500 },
    ]);
    expect(ofType('call').at(-1)).toMatchObject({ outcome: 'rejected', code: 'circuit_open' });
    // the route is its own breaker: another route is unaffected
    await expect(succeed(resilience, 'other')).resolves.toBe('ok');
  });

  it('the window is rolling: failures older than samplingWindow no longer count', async () => {
    const { resilience, clock } = setup([
      policy('p', [breaker({ minThroughput: 4, failureRatio: 1, samplingWindow: '10s' })]),
    ]);
    for (let i = 0; i < 3; i++) await fail(resilience);
    await clock.advance(11_000);
    await fail(resilience);
    expect(await state(resilience)).toMatchObject({ state: 'closed', calls: 1 });
    await clock.advance(5_000);
    for (let i = 0; i < 3; i++) await fail(resilience);
    expect((await state(resilience))?.state).toBe('open'); // 4 failures within 10 s
  });

  it('outcome table: overload and neutral outcomes are not recorded; caller errors are healthy calls', async () => {
    const { resilience } = setup([policy('p', [breaker({ minThroughput: 2, failureRatio: 0.5 })])]);
    const run = (e: unknown) =>
      resilience.run(() => Promise.reject(e), { policy: 'p' }).catch(() => undefined);
    await run(kindError('throttled'));
    await run(kindError('concurrency'));
    await run(Object.assign(new Error('429'), { status: 429 }));
    expect(await state(resilience)).toMatchObject({ calls: 0 });
    await run(kindError('validation'));
    await run(Object.assign(new Error('404'), { status: 404 }));
    await run(kindError('domain'));
    expect(await state(resilience)).toEqual({ state: 'closed', calls: 3, failureRatio: 0 });
    await run(new Error('unclassified → internal → failure'));
    await run(Object.assign(new Error('503'), { status: 503 }));
    await run(kindError('timeout'));
    expect(await state(resilience)).toMatchObject({ state: 'open' }); // 3/6 = 0.5
  });
});

describe('breaker: half-open', () => {
  async function tripped(halfOpenMaxCalls = 1) {
    const t = setup([policy('p', [breaker({ minThroughput: 1, breakDuration: '5s', halfOpenMaxCalls })])]);
    await fail(t.resilience);
    expect((await state(t.resilience))?.state).toBe('open');
    return t;
  }

  it('turns half-open lazily on the first call after breakDuration; a successful probe closes it', async () => {
    const { resilience, clock, ofType } = await tripped();
    await clock.advance(4999);
    await expect(succeed(resilience)).rejects.toMatchObject({ code: 'circuit_open', retryAfter: 1 });
    await clock.advance(1);
    await expect(succeed(resilience)).resolves.toBe('ok');
    expect(ofType('breaker_state').map((e) => `${e.from}→${e.to}`)).toEqual([
      'closed→open',
      'open→half_open',
      'half_open→closed',
    ]);
    expect(await state(resilience)).toEqual({ state: 'closed', calls: 0, failureRatio: 0 });
  });

  it('a failing probe re-opens it for another breakDuration', async () => {
    const { resilience, clock, ofType } = await tripped();
    await clock.advance(5000);
    await fail(resilience);
    expect(ofType('breaker_state').map((e) => e.to)).toEqual(['open', 'half_open', 'open']);
    await clock.advance(4999);
    expect(codeOf(await errorOf(succeed(resilience)))).toBe('circuit_open');
    await clock.advance(1);
    await expect(succeed(resilience)).resolves.toBe('ok');
  });

  it.each([1, 3, 7])(
    '1,000 concurrent calls when half-open (halfOpenMaxCalls = %i) → exactly that many probes run',
    async (k) => {
      const { resilience, clock, ofType } = await tripped(k);
      await clock.advance(5000);
      const probes = deferred<string>();
      let executions = 0;
      const runs = Array.from({ length: 1000 }, () =>
        settle(
          resilience.run(
            () => {
              executions++;
              return probes.promise;
            },
            { policy: 'p' },
          ),
        ),
      );
      await clock.advance(0);
      expect(executions).toBe(k);
      const rejected = runs.filter((r) => r.done);
      expect(rejected).toHaveLength(1000 - k);
      expect(rejected.every((r) => codeOf(r.error) === 'circuit_open')).toBe(true);
      expect(ofType('rejected').length).toBe(1000 - k); // exactly once per rejection
      probes.resolve('ok');
      await clock.advance(0);
      expect(runs.filter((r) => r.value === 'ok')).toHaveLength(k);
      expect((await state(resilience))?.state).toBe('closed');
    },
  );

  it('closes only when all halfOpenMaxCalls probes succeeded (no off-by-one)', async () => {
    const { resilience, clock } = await tripped(3);
    await clock.advance(5000);
    const ds = [deferred(), deferred(), deferred()];
    const runs = ds.map((d) => settle(resilience.run(() => d.promise, { policy: 'p' })));
    await clock.advance(0);
    ds[0]!.resolve(1);
    ds[1]!.resolve(2);
    await clock.advance(0);
    expect((await state(resilience))?.state).toBe('half_open');
    expect(codeOf(await errorOf(succeed(resilience)))).toBe('circuit_open'); // still 3 probes per period
    ds[2]!.resolve(3);
    await clock.advance(0);
    expect(runs.map((r) => r.value)).toEqual([1, 2, 3]);
    expect((await state(resilience))?.state).toBe('closed');
  });

  it('a neutral (overload) probe outcome gives its slot back and moves nothing', async () => {
    const { resilience, clock, ofType } = await tripped();
    await clock.advance(5000);
    await resilience
      .run(() => Promise.reject(kindError('throttled')), { policy: 'p' })
      .catch(() => undefined);
    expect((await state(resilience))?.state).toBe('half_open');
    await expect(succeed(resilience)).resolves.toBe('ok'); // a fresh probe is admitted at once
    expect(ofType('breaker_state').map((e) => e.to)).toEqual(['open', 'half_open', 'closed']);
  });

  it('a probe that never reports is reclaimed after breakDuration: half-open cannot wedge', async () => {
    const { resilience, clock } = await tripped();
    await clock.advance(5000);
    settle(resilience.run(hang, { policy: 'p' })); // the probe hangs, no timeout anywhere
    await clock.advance(4999);
    expect(codeOf(await errorOf(succeed(resilience)))).toBe('circuit_open');
    await clock.advance(1);
    await expect(succeed(resilience)).resolves.toBe('ok');
    expect((await state(resilience))?.state).toBe('closed');
  });
});

describe('breaker: late outcomes (calls admitted before the latest state change)', () => {
  it('a call admitted while closed that succeeds during half-open does not close the breaker', async () => {
    const { resilience, clock, ofType } = setup([
      policy('p', [breaker({ minThroughput: 2, failureRatio: 1 })]),
    ]);
    const slow = deferred<string>();
    const late = settle(resilience.run(() => slow.promise, { policy: 'p' }));
    await fail(resilience);
    await fail(resilience); // trips while the slow call is in flight
    await clock.advance(5000);
    const probe = deferred<string>();
    settle(resilience.run(() => probe.promise, { policy: 'p' }));
    await clock.advance(0);
    slow.resolve('late');
    await clock.advance(0);
    expect(late.value).toBe('late');
    expect((await state(resilience))?.state).toBe('half_open');
    probe.reject(infraError());
    await clock.advance(0);
    expect((await state(resilience))?.state).toBe('open');
    expect(ofType('breaker_state').map((e) => e.to)).toEqual(['open', 'half_open', 'open']);
  });

  it('a call admitted while closed that fails after the breaker re-closed does not re-open it', async () => {
    const { resilience, clock } = setup([policy('p', [breaker({ minThroughput: 1, failureRatio: 1 })])]);
    const slow = deferred<string>();
    settle(resilience.run(() => slow.promise, { policy: 'p' }));
    await fail(resilience);
    await clock.advance(5000);
    await succeed(resilience); // probe closes it
    slow.reject(infraError('from an older generation'));
    await clock.advance(0);
    expect(await state(resilience)).toEqual({ state: 'closed', calls: 0, failureRatio: 0 });
  });

  it('simultaneous failures past the threshold open it once; it still turns half-open after breakDuration', async () => {
    const { resilience, clock, ofType } = setup([policy('p', [breaker({ minThroughput: 4 })])]);
    const ds = Array.from({ length: 10 }, () => deferred());
    const runs = ds.map((d) => settle(resilience.run(() => d.promise, { policy: 'p' })));
    await clock.advance(0);
    ds.forEach((d) => d.reject(infraError()));
    await clock.advance(0);
    expect(runs.every((r) => r.done)).toBe(true);
    expect(ofType('breaker_state').map((e) => e.to)).toEqual(['open']);
    await clock.advance(5000);
    await expect(succeed(resilience)).resolves.toBe('ok');
    expect(ofType('breaker_state').map((e) => e.to)).toEqual(['open', 'half_open', 'closed']);
  });
});
