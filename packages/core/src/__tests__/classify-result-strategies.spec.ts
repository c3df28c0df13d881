import { AdaptiveBulkheadStrategy } from '../strategies/adaptive-bulkhead-strategy';
import { AdaptiveThrottleStrategy } from '../strategies/adaptive-throttle-strategy';
import { HedgeStrategy } from '../strategies/hedge-strategy';
import { codeOf, policy } from './kit';
import { settle, setup } from './helpers';

/**
 * classifyResult (SPEC §14.3) through the strategies that judge outcomes without a thrown error: the adaptive
 * throttle, hedging and the adaptive bulkhead. (Breaker, retry and fallback: classify-result.spec.ts.)
 */

const response = (status: number) => new Response(null, { status });
const statusOf = (v: unknown) => (v as Response).status;

describe('classifyResult through the other strategies', () => {
  it('the adaptive throttle counts classified results as failures and starts shedding; healthy results do not', async () => {
    const { resilience, ofType } = setup([
      policy('down', [new AdaptiveThrottleStrategy({ k: 1.5, minThroughput: 5 })], {
        classifyResult: 'http',
      }),
      policy('up', [new AdaptiveThrottleStrategy({ k: 1.5, minThroughput: 5 })], { classifyResult: 'http' }),
    ]);
    const outcomes: string[] = [];
    for (let i = 0; i < 40; i++) {
      const r = await resilience
        .run(() => response(503), { policy: 'down' })
        .then(
          (v) => `status ${statusOf(v)}`,
          (e: unknown) => String(codeOf(e)),
        );
      outcomes.push(r);
    }
    // Every call that ran ended on the 503 (resolved, not thrown); the throttle refused some of the later ones.
    expect(outcomes.slice(0, 5)).toEqual(Array(5).fill('status 503'));
    expect(outcomes.filter((o) => o === 'adaptive_throttle').length).toBeGreaterThan(5);
    expect(outcomes.every((o) => o === 'status 503' || o === 'adaptive_throttle')).toBe(true);
    expect(ofType('throttle_reject').length).toBe(outcomes.filter((o) => o === 'adaptive_throttle').length);
    for (let i = 0; i < 40; i++) await resilience.run(() => response(200), { policy: 'up' });
    const [up] = await resilience.admin.inspect({ policy: 'up' });
    expect(up?.throttleRejectionProbability).toBe(0);
  });

  it('a hedge does not take a classified result as the answer: a healthy later lane wins', async () => {
    const { resilience, clock, ofType } = setup([
      policy('p', [], { classifyResult: 'http', hedge: new HedgeStrategy({ delay: 50, maxAttempts: 2 }) }),
    ]);
    let lane = 0;
    const fn = () => {
      const n = ++lane;
      // The primary answers 503 after 80 ms, the hedge (started at 50) a 200 after 60 ms more.
      return new Promise((resolve) =>
        clock.setTimeout(() => resolve(response(n === 1 ? 503 : 200)), n === 1 ? 80 : 60),
      );
    };
    const s = settle(resilience.run(fn, { policy: 'p' }));
    await clock.advance(200);
    expect(statusOf(s.value)).toBe(200);
    expect(ofType('hedge_won')).toEqual([expect.objectContaining({ attempt: 2 })]);
  });

  it('when every hedged lane ends on a classified result, run resolves with the last one', async () => {
    const { resilience, clock } = setup([
      policy('p', [], { classifyResult: 'http', hedge: new HedgeStrategy({ delay: 50, maxAttempts: 2 }) }),
    ]);
    let lane = 0;
    const fn = () => {
      const n = ++lane;
      return new Promise((resolve) => clock.setTimeout(() => resolve(response(n === 1 ? 502 : 503)), 80));
    };
    const s = settle(resilience.run(fn, { policy: 'p' }));
    await clock.advance(300);
    expect(s.error).toBeUndefined();
    expect([502, 503]).toContain(statusOf(s.value));
    expect(clock.pendingTimers()).toBe(0);
  });

  it('an AIMD bulkhead grows back on fast healthy results, never on fast classified failures', async () => {
    const aimd = () =>
      new AdaptiveBulkheadStrategy({
        maxConcurrency: 50,
        minConcurrency: 2,
        latencyThreshold: 100,
        cooldown: 0,
      });
    const { resilience, clock } = setup([
      policy('ok', [aimd()], { classifyResult: 'http' }),
      policy('failing', [aimd()], { classifyResult: 'http' }),
    ]);
    const limitOf = async (name: string) =>
      (await resilience.admin.inspect({ policy: name }))[0]!.concurrencyLimit!;
    // Slow answers (over the 100 ms threshold) bring both limits down first.
    for (const name of ['ok', 'failing'])
      for (let i = 0; i < 3; i++) {
        const s = settle(
          resilience.run(
            () => new Promise((resolve) => clock.setTimeout(() => resolve(response(200)), 150)),
            {
              policy: name,
            },
          ),
        );
        await clock.advance(150);
        expect(s.done).toBe(true);
      }
    const low = [await limitOf('ok'), await limitOf('failing')];
    expect(low[0]).toBeLessThan(50);
    expect(low[1]).toBe(low[0]);
    for (let i = 0; i < 30; i++) {
      await resilience.run(() => response(200), { policy: 'ok' });
      await resilience.run(() => response(503), { policy: 'failing' });
    }
    expect(await limitOf('ok')).toBeGreaterThan(low[0]!);
    expect(await limitOf('failing')).toBe(low[1]); // a fast 503 is no sign of spare capacity
  });
});
