import { BASE, admit, calls, params, toHalfOpen, type Bench } from './circuit-breaker-conformance-kit';

/*
 * What a breaker tells an operator about why it is open and for how long (SPEC §5 events, §6 admin.inspect):
 * a transition to open carries the failure ratio and calls that opened it, and `inspect` keeps reporting them while
 * open and half-open (the window itself is not kept then) with `retryAfter`, the ms until the break ends. The port
 * marks these optional for third-party stores; a store that runs this suite must provide them.
 */
export function describeBreakerTripDetails(bench: () => Bench): void {
  it('a closed → open transition carries the failure ratio and calls of the rolling window that tripped it', async () => {
    const b = bench();
    const key = b.key();
    await b.alignTo(BASE.samplingWindow);
    await calls(b, key, BASE, 8, false);
    await b.advance(BASE.samplingWindow); // those 8 successes roll out of the window
    await calls(b, key, BASE, 5, false);
    expect((await calls(b, key, BASE, 4, true)).state).toBe('closed');
    expect(await calls(b, key, BASE, 1, true)).toEqual({
      state: 'open',
      transition: { from: 'closed', to: 'open', failureRatio: 0.5, calls: 10 },
    });
  });

  it('inspect of an open breaker shows what tripped it and a retryAfter that shrinks to the break’s end', async () => {
    const b = bench();
    const key = b.key();
    await calls(b, key, BASE, 3, false);
    await calls(b, key, BASE, 7, true);
    expect(await b.store.inspect(key, BASE, b.now())).toMatchObject({
      state: 'open',
      calls: 10,
      failureRatio: 0.7,
      retryAfter: BASE.breakDuration,
    });
    await b.advance(1200);
    const later = await b.store.inspect(key, BASE, b.now());
    expect(later).toMatchObject({ state: 'open', calls: 10, failureRatio: 0.7, retryAfter: 3800 });
    // the same wait a call rejected now is told
    expect(await b.store.acquire(key, BASE, b.now())).toMatchObject({ admitted: false, retryAfter: 3800 });
    // inspecting moved nothing: the window is still frozen at the trip
    expect(await b.store.inspect(key, BASE, b.now())).toEqual(later);
    // a reset forgets it: an empty window, no retryAfter
    await b.store.reset(key, b.now());
    const reset = await b.store.inspect(key, BASE, b.now());
    expect(reset).toMatchObject({ state: 'closed', calls: 0, failureRatio: 0 });
    expect(reset.retryAfter).toBeUndefined();
  });

  it('inspect keeps what opened the breaker through half-open (no retryAfter) until it closes', async () => {
    const b = bench();
    const key = b.key();
    const p = params({ halfOpenMaxCalls: 2 });
    await calls(b, key, p, p.minThroughput, true);
    await b.advance(p.breakDuration);
    // the break is over but nobody has called: reads half-open (what the next call finds)
    const due = await b.store.inspect(key, p, b.now());
    expect(due).toMatchObject({ state: 'half_open', calls: 10, failureRatio: 1 });
    expect(due.retryAfter).toBeUndefined();
    const probes = [await admit(b, key, p), await admit(b, key, p)];
    const probing = await b.store.inspect(key, p, b.now());
    expect(probing).toMatchObject({ state: 'half_open', calls: 10, failureRatio: 1 });
    expect(probing.retryAfter).toBeUndefined();
    expect((await b.store.record(key, p, probes[0]!, 'success', b.now())).state).toBe('half_open');
    expect(await b.store.inspect(key, p, b.now())).toMatchObject({ calls: 10, failureRatio: 1 });
    // closing forgets it (a fresh window); a transition away from open carries no ratio
    expect(await b.store.record(key, p, probes[1]!, 'success', b.now())).toEqual({
      state: 'closed',
      transition: { from: 'half_open', to: 'closed' },
    });
    const closed = await b.store.inspect(key, p, b.now());
    expect(closed).toMatchObject({ state: 'closed', calls: 0, failureRatio: 0 });
    expect(closed.retryAfter).toBeUndefined();
  });

  it('a half-open → open transition carries the probes that reported, the failing one included', async () => {
    const b = bench();
    const key = b.key();
    const p = params({ halfOpenMaxCalls: 3 });
    const first = await toHalfOpen(b, key, p);
    expect(first.transition).toEqual({ from: 'open', to: 'half_open' }); // no ratio: not a move to open
    const probes = [first, await admit(b, key, p), await admit(b, key, p)];
    await b.store.record(key, p, probes[0]!, 'success', b.now());
    await b.store.record(key, p, probes[1]!, 'success', b.now());
    expect(await b.store.record(key, p, probes[2]!, 'failure', b.now())).toEqual({
      state: 'open',
      transition: { from: 'half_open', to: 'open', failureRatio: 1 / 3, calls: 3 },
    });
    expect(await b.store.inspect(key, p, b.now())).toMatchObject({
      state: 'open',
      calls: 3,
      failureRatio: 1 / 3,
      retryAfter: p.breakDuration,
    });
  });

  it('retryAfter of an open breaker is at most breakDuration after the clock steps back', async () => {
    const b = bench();
    const key = b.key();
    await calls(b, key, BASE, BASE.minThroughput, true);
    const earlier = b.now() - 3_600_000;
    expect(await b.store.inspect(key, BASE, earlier)).toMatchObject({
      state: 'open',
      calls: 10,
      retryAfter: BASE.breakDuration,
    });
  });
}
