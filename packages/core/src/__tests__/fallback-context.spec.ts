import { currentSignal } from '../context/context-storage';
import { Criticality, bindCriticality, currentCriticality } from '../context/criticality';
import { remainingTime, withDeadline } from '../context/deadline';
import type { CallContext } from '../resilience-types';
import { FallbackStrategy } from '../strategies/fallback-strategy';
import { TimeoutStrategy } from '../strategies/timeout-strategy';
import { infraError, settle, setup } from './helpers';
import { hang, policy, trackedController } from './kit';

/**
 * The fallback is user code running under `resilience.run`, like `fn`: code inside it that cannot take `ctx` (a
 * client that reads `currentSignal()`, a nested decorated call) sees the fallback's own context — its signal, the
 * caller's deadline and criticality (SPEC §5 `currentSignal()`).
 */

describe('fallback ambient context', () => {
  it('currentSignal() inside a fallback is its ctx.signal, which a caller abort aborts', async () => {
    const { resilience, clock } = setup([policy('p', [new TimeoutStrategy({ timeout: 100 })])]);
    const t = trackedController();
    let ambient: AbortSignal | undefined;
    let given: AbortSignal | undefined;
    const s = settle(
      resilience.run(hang, {
        policy: 'p',
        signal: t.signal,
        fallback: async (_e, ctx) => {
          await Promise.resolve();
          ambient = currentSignal();
          given = ctx.signal;
          return new Promise<string>(() => {});
        },
      }),
    );
    await clock.advance(100);
    expect(ambient).toBeDefined();
    expect(ambient).toBe(given);
    expect(ambient?.aborted).toBe(false);
    const why = new Error('caller left');
    t.ac.abort(why);
    await clock.advance(0);
    expect(s.error).toBe(why);
    expect(ambient?.aborted).toBe(true);
    expect(ambient?.reason).toBe(why);
  });

  it("a policy fallback sees the caller's deadline and criticality, and its own signal", async () => {
    const { resilience, clock } = setup([
      policy('p', [], {
        fallback: new FallbackStrategy({
          fallback: (_e: unknown, ctx: CallContext) => ({
            same: currentSignal() === ctx.signal,
            left: remainingTime(),
            level: currentCriticality(),
          }),
        }),
      }),
    ]);
    const s = settle(
      withDeadline(
        500,
        () =>
          bindCriticality(Criticality.DEGRADED, () =>
            resilience.run(
              async () => {
                await clock.sleep(200);
                throw infraError();
              },
              { policy: 'p' },
            ),
          ),
        clock,
      ),
    );
    await clock.advance(200);
    expect(s.value).toEqual({ same: true, left: 300, level: Criticality.DEGRADED });
    expect(currentSignal()).toBeUndefined(); // nothing leaks out of the call
  });

  it('with ambientContext: false the fallback runs in the caller context, as fn does', async () => {
    const { resilience } = setup([policy('p', [])], { ambientContext: false });
    const seen = await resilience.run(
      () => {
        throw infraError();
      },
      { policy: 'p', fallback: () => currentSignal() },
    );
    expect(seen).toBeUndefined();
  });
});
