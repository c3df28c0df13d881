import { BulkheadStrategy } from '../strategies/bulkhead-strategy';
import { FallbackStrategy } from '../strategies/fallback-strategy';
import { HedgeStrategy } from '../strategies/hedge-strategy';
import { TimeoutStrategy } from '../strategies/timeout-strategy';
import { settle, setup } from './helpers';
import { hang, policy } from './kit';

/**
 * A caller abort that lands while `fn` (or the fallback, or a hedged lane's fn) is still running synchronously
 * (SPEC §2, §11.14): the call still rejects at once with the signal's reason and gives back its bulkhead slot.
 * Found by translating cockatiel's suite: the abort was never seen, the call hung and the next got bulkhead_full.
 */
const reason = () => new Error('caller gave up');

describe('a caller abort while fn runs synchronously', () => {
  it('fn aborts the caller signal before returning a promise that never settles: run rejects, the slot is free', async () => {
    const { resilience, clock, ofType } = setup([
      policy('p', [new BulkheadStrategy({ maxConcurrency: 1, maxQueue: 0 })]),
    ]);
    const ac = new AbortController();
    const why = reason();
    const s = settle(
      resilience.run(
        () => {
          ac.abort(why);
          return hang();
        },
        { policy: 'p', signal: ac.signal },
      ),
    );
    await clock.advance(0);
    expect(s.error).toBe(why);
    await expect(resilience.run(() => 'next', { policy: 'p' })).resolves.toBe('next');
    expect(ofType('call').map((e) => e.outcome)).toEqual(['cancelled', 'success']);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('the same with a timeout in the policy: rejects with the caller reason, not the timeout, no timer left', async () => {
    const { resilience, clock } = setup([
      policy('p', [
        new BulkheadStrategy({ maxConcurrency: 1, maxQueue: 0 }),
        new TimeoutStrategy({ timeout: 1000 }),
      ]),
    ]);
    const ac = new AbortController();
    const why = reason();
    const s = settle(
      resilience.run(
        () => {
          ac.abort(why);
          return hang();
        },
        { policy: 'p', signal: ac.signal },
      ),
    );
    await clock.advance(0);
    expect(s.error).toBe(why);
    expect(clock.pendingTimers()).toBe(0);
    await expect(resilience.run(() => 'next', { policy: 'p' })).resolves.toBe('next');
  });

  it('fn aborts, then returns a value synchronously: fn finished first, so the call succeeds (as Polly and cockatiel return the result), the slot is free', async () => {
    const { resilience, clock, ofType } = setup([
      policy('p', [new BulkheadStrategy({ maxConcurrency: 1, maxQueue: 0 })]),
    ]);
    const ac = new AbortController();
    const why = reason();
    const s = settle(
      resilience.run(
        () => {
          ac.abort(why);
          return 'done';
        },
        { policy: 'p', signal: ac.signal },
      ),
    );
    await clock.advance(0);
    expect(s).toEqual({ done: true, value: 'done' });
    await expect(resilience.run(() => 'next', { policy: 'p' })).resolves.toBe('next');
    expect(ofType('call').map((e) => e.outcome)).toEqual(['success', 'success']);
  });

  it('the fallback aborts the caller while it runs synchronously: run rejects with the reason', async () => {
    const ac = new AbortController();
    const why = reason();
    const { resilience, clock } = setup([
      policy('p', [new BulkheadStrategy({ maxConcurrency: 1, maxQueue: 0 })], {
        fallback: new FallbackStrategy({
          fallback: () => {
            ac.abort(why);
            return hang();
          },
        }),
      }),
    ]);
    const s = settle(
      resilience.run(
        () => {
          throw new Error('down');
        },
        { policy: 'p', signal: ac.signal },
      ),
    );
    await clock.advance(0);
    expect(s.error).toBe(why);
    await expect(resilience.run(() => 'next', { policy: 'p' })).resolves.toBe('next');
    expect(clock.pendingTimers()).toBe(0);
  });

  it('a hedged lane aborts the caller while its fn runs synchronously: run rejects, every lane is released', async () => {
    const { resilience, clock } = setup([
      policy('p', [new BulkheadStrategy({ maxConcurrency: 2, maxQueue: 0 })], {
        hedge: new HedgeStrategy({ maxAttempts: 2, delay: 10 }),
      }),
    ]);
    const ac = new AbortController();
    const why = reason();
    let n = 0;
    const s = settle(
      resilience.run(
        () => {
          n++;
          if (n === 2) ac.abort(why);
          return hang();
        },
        { policy: 'p', signal: ac.signal },
      ),
    );
    await clock.advance(10);
    expect(n).toBe(2);
    expect(s.error).toBe(why);
    await clock.advance(0);
    expect(clock.pendingTimers()).toBe(0);
    const both = [resilience.run(() => 'a', { policy: 'p' }), resilience.run(() => 'b', { policy: 'p' })];
    await expect(Promise.all(both)).resolves.toEqual(['a', 'b']);
  });
});
