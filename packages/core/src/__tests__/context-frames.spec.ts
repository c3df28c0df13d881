import { currentSignal } from '../context/context-storage';
import { currentCriticality, bindCriticality } from '../context/criticality';
import { remainingTime, withDeadline } from '../context/deadline';
import { BulkheadStrategy } from '../strategies/bulkhead-strategy';
import { CircuitBreakerStrategy } from '../strategies/circuit-breaker-strategy';
import { FallbackStrategy } from '../strategies/fallback-strategy';
import { HedgeStrategy } from '../strategies/hedge-strategy';
import { RateLimitStrategy } from '../strategies/rate-limit-strategy';
import { RetryStrategy } from '../strategies/retry-strategy';
import { TimeoutStrategy } from '../strategies/timeout-strategy';
import type { CallContext } from '../resilience-types';
import { setup } from './helpers';
import { policy } from './kit';

/**
 * One context frame only for a call that changes what the ambient functions answer inside it (SPEC §12.1, §14.6):
 * something that can abort an attempt — a timeout, the caller's signal, a deadline, a hedge — makes `currentSignal()`
 * inside it the attempt's signal. A call nothing can abort runs fn in its caller's frame: `currentSignal()`,
 * `remainingTime()` and `currentCriticality()` answer there as they would in the caller (its signal would never
 * abort: the caller's is the one that matters).
 */

const unabortable = () =>
  policy('plain', [
    new RateLimitStrategy({ permits: 100, per: '1s' }),
    new BulkheadStrategy({ maxConcurrency: 10, maxQueue: 0 }),
    new CircuitBreakerStrategy({
      failureRatio: 0.5,
      samplingWindow: '10s',
      minThroughput: 10,
      breakDuration: '5s',
    }),
    new RetryStrategy({ maxAttempts: 3, backoff: { base: 1, max: 1, jitter: 'none' } }),
  ]);

/** What the ambient functions answer inside fn, and fn's ctx.signal. */
function probe() {
  const seen: {
    signal: AbortSignal | undefined;
    ctxSignal: AbortSignal | undefined;
    remaining: number | undefined;
    level: number;
  }[] = [];
  const fn = (ctx: CallContext) => {
    seen.push({
      signal: currentSignal(),
      ctxSignal: ctx.signal,
      remaining: remainingTime(),
      level: currentCriticality(),
    });
    return 'ok';
  };
  return { seen, fn };
}

describe('a call nothing can abort runs in its caller frame', () => {
  it('at top level: currentSignal() is undefined inside, as outside; ctx.signal is still there and never aborted', async () => {
    const { resilience } = setup([unabortable()]);
    const p = probe();
    await expect(resilience.run(p.fn, { policy: 'plain' })).resolves.toBe('ok');
    expect(p.seen[0]!.signal).toBeUndefined();
    expect(p.seen[0]!.ctxSignal).toBeInstanceOf(AbortSignal);
    expect(p.seen[0]!.ctxSignal!.aborted).toBe(false);
  });

  it('nested in an abortable call: currentSignal() inside is the outer call’s signal, which is what can abort it', async () => {
    const { resilience } = setup([unabortable(), policy('timed', [new TimeoutStrategy({ timeout: 1000 })])]);
    const p = probe();
    let outer: AbortSignal | undefined;
    await resilience.run(
      async (ctx) => {
        outer = ctx.signal;
        return resilience.run(p.fn, { policy: 'plain' });
      },
      { policy: 'timed' },
    );
    expect(p.seen[0]!.signal).toBe(outer);
  });

  it('under bindCriticality: the level is the caller’s (a call changes no level)', async () => {
    const { resilience } = setup([unabortable()]);
    const p = probe();
    await bindCriticality(3, () => resilience.run(p.fn, { policy: 'plain' }));
    expect(p.seen[0]!.level).toBe(3);
    expect(p.seen[0]!.signal).toBeUndefined();
  });

  it('the fallback of such a call runs in the caller frame too', async () => {
    const seen: (AbortSignal | undefined)[] = [];
    const { resilience } = setup([
      policy('plain', [new RetryStrategy({ maxAttempts: 1 })], {
        fallback: new FallbackStrategy({
          fallback: () => {
            seen.push(currentSignal());
            return 'fallback';
          },
        }),
      }),
    ]);
    await expect(
      resilience.run(
        () => {
          throw new Error('down');
        },
        { policy: 'plain' },
      ),
    ).resolves.toBe('fallback');
    expect(seen).toEqual([undefined]);
  });
});

describe('a call something can abort runs in a frame of its own: currentSignal() is the attempt’s signal', () => {
  it.each([
    ['a timeout', () => policy('p', [new TimeoutStrategy({ timeout: 1000 })]), {}],
    ['a caller signal', () => policy('p', []), { signal: new AbortController().signal }],
    ['a hedge', () => policy('p', [], { hedge: new HedgeStrategy({ delay: 1000, maxAttempts: 2 }) }), {}],
  ] as const)('%s', async (_, make, extra) => {
    const { resilience } = setup([make()]);
    const p = probe();
    await expect(resilience.run(p.fn, { policy: 'p', ...extra })).resolves.toBe('ok');
    expect(p.seen[0]!.signal).toBeInstanceOf(AbortSignal);
    expect(p.seen[0]!.signal).toBe(p.seen[0]!.ctxSignal);
  });

  it('a deadline bound around the call (withDeadline): the signal is the attempt’s, the remaining time the caller’s', async () => {
    const { resilience, clock } = setup([unabortable()]);
    const p = probe();
    await withDeadline(500, () => resilience.run(p.fn, { policy: 'plain' }), clock);
    expect(p.seen[0]!.signal).toBe(p.seen[0]!.ctxSignal);
    expect(p.seen[0]!.remaining).toBe(500);
  });

  it('with ambientContext: false nothing enters a frame, whatever the policy', async () => {
    const { resilience } = setup([policy('p', [new TimeoutStrategy({ timeout: 1000 })])], {
      ambientContext: false,
    });
    const p = probe();
    await resilience.run(p.fn, { policy: 'p' });
    expect(p.seen[0]!.signal).toBeUndefined();
  });
});
