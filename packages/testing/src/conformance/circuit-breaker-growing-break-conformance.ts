import { admit, calls, params, type Bench } from './circuit-breaker-conformance-kit';
import type { BreakerParamsShape, ConformanceKey } from './store-shapes';

/*
 * Growing breaks (SPEC §14.3): with `maxBreakDuration`, each re-open after a failed half-open period lasts the
 * previous break × `breakDurationMultiplier` (default 2), capped; a close resets it to `breakDuration`. The length
 * lives in the store, so every replica sharing it waits the same break.
 */

const GROWING = params({ breakDuration: 1000, maxBreakDuration: 5000 });

/** Waits out the current break, takes the half-open probe and fails it; answers the re-open's rejection. */
async function failProbe(b: Bench, key: ConformanceKey, p: BreakerParamsShape, wait: number) {
  await b.advance(wait);
  const probe = await admit(b, key, p);
  const r = await b.store.record(key, p, probe, 'failure', b.now());
  expect(r.state).toBe('open');
  return b.store.acquire(key, p, b.now());
}

export function describeGrowingBreaks(bench: () => Bench): void {
  it('each failed half-open period doubles the break (1 s, 2 s, 4 s), capped at maxBreakDuration', async () => {
    const b = bench();
    const key = b.key();
    await calls(b, key, GROWING, GROWING.minThroughput, true);
    expect(await b.store.acquire(key, GROWING, b.now())).toMatchObject({ admitted: false, retryAfter: 1000 });
    expect(await failProbe(b, key, GROWING, 1000)).toMatchObject({ admitted: false, retryAfter: 2000 });
    expect(await b.store.inspect(key, GROWING, b.now())).toMatchObject({ state: 'open', retryAfter: 2000 });
    // one ms before the doubled break ends it is still open
    await b.advance(1999);
    expect(await b.store.acquire(key, GROWING, b.now())).toMatchObject({ admitted: false, retryAfter: 1 });
    expect(await failProbe(b, key, GROWING, 1)).toMatchObject({ admitted: false, retryAfter: 4000 });
    expect(await failProbe(b, key, GROWING, 4000)).toMatchObject({ admitted: false, retryAfter: 5000 });
    expect(await failProbe(b, key, GROWING, 5000)).toMatchObject({ admitted: false, retryAfter: 5000 });
  });

  it('a close resets the break to breakDuration; so does an operator reset', async () => {
    const b = bench();
    const key = b.key();
    await calls(b, key, GROWING, GROWING.minThroughput, true);
    await failProbe(b, key, GROWING, 1000);
    await failProbe(b, key, GROWING, 2000);
    await b.advance(4000);
    const probe = await admit(b, key, GROWING);
    expect((await b.store.record(key, GROWING, probe, 'success', b.now())).state).toBe('closed');
    await calls(b, key, GROWING, GROWING.minThroughput, true);
    expect(await b.store.acquire(key, GROWING, b.now())).toMatchObject({ admitted: false, retryAfter: 1000 });
    expect(await failProbe(b, key, GROWING, 1000)).toMatchObject({ retryAfter: 2000 });
    await b.store.reset(key, b.now());
    await calls(b, key, GROWING, GROWING.minThroughput, true);
    expect(await b.store.acquire(key, GROWING, b.now())).toMatchObject({ admitted: false, retryAfter: 1000 });
  });

  it('uses breakDurationMultiplier; without maxBreakDuration every break lasts breakDuration', async () => {
    const b = bench();
    const triple = params({ breakDuration: 1000, maxBreakDuration: 60_000, breakDurationMultiplier: 3 });
    const key = b.key();
    await calls(b, key, triple, triple.minThroughput, true);
    expect(await failProbe(b, key, triple, 1000)).toMatchObject({ retryAfter: 3000 });
    expect(await failProbe(b, key, triple, 3000)).toMatchObject({ retryAfter: 9000 });
    const fixed = params({ breakDuration: 1000 });
    const other = b.key();
    await calls(b, other, fixed, fixed.minThroughput, true);
    expect(await failProbe(b, other, fixed, 1000)).toMatchObject({ retryAfter: 1000 });
    expect(await failProbe(b, other, fixed, 1000)).toMatchObject({ retryAfter: 1000 });
  });

  it('a grown break is cut to a lowered maxBreakDuration (a retune), and to breakDuration when it is removed', async () => {
    const b = bench();
    const key = b.key();
    await calls(b, key, GROWING, GROWING.minThroughput, true);
    await failProbe(b, key, GROWING, 1000);
    expect(await failProbe(b, key, GROWING, 2000)).toMatchObject({ retryAfter: 4000 });
    const lowered = { ...GROWING, maxBreakDuration: 2500 };
    expect(await b.store.inspect(key, lowered, b.now())).toMatchObject({ state: 'open', retryAfter: 2500 });
    expect(await b.store.acquire(key, lowered, b.now())).toMatchObject({ admitted: false, retryAfter: 2500 });
    const fixed = params({ breakDuration: 1000 });
    expect(await b.store.acquire(key, fixed, b.now())).toMatchObject({ admitted: false, retryAfter: 1000 });
  });
}
