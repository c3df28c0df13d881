import { FakeClock } from './fake-clock';

/** A throw (a timer's own, or runAll refusing a runaway timer) must not leave the clock half-moved or drop timers. */
describe('FakeClock — throws do not corrupt the clock', () => {
  it('regression (review): a timer that throws does not stop advance; it rejects with the first error at the end', async () => {
    const c = new FakeClock();
    const seen: string[] = [];
    const first = new Error('first');
    c.setTimeout(() => {
      seen.push(`a@${c.now()}`);
      throw first;
    }, 5);
    c.setTimeout(() => {
      seen.push(`b@${c.now()}`);
      throw new Error('second');
    }, 6);
    c.setTimeout(() => seen.push(`c@${c.now()}`), 7);
    c.setTimeout(() => seen.push(`d@${c.now()}`), 11);
    await expect(c.advance(10)).rejects.toBe(first);
    expect(seen).toEqual(['a@5', 'b@6', 'c@7']);
    expect(c.now()).toBe(10);
    expect(c.pendingTimers()).toBe(1);
    await c.advance(1);
    expect(seen).toEqual(['a@5', 'b@6', 'c@7', 'd@11']);
  });

  it('regression (review): runAll fires the timers after one that throws, then rejects with its error', async () => {
    const c = new FakeClock();
    const seen: number[] = [];
    const boom = new Error('boom');
    c.setTimeout(() => {
      throw boom;
    }, 1);
    c.setTimeout(() => seen.push(c.now()), 2);
    await expect(c.runAll()).rejects.toBe(boom);
    expect(seen).toEqual([2]);
    expect(c.pendingTimers()).toBe(0);
  });

  it('regression (review): refusing a self-rescheduling timer leaves it pending, not dropped unfired', async () => {
    const c = new FakeClock();
    let fired = 0;
    const loop = (): void => {
      fired++;
      c.setTimeout(loop, 1);
    };
    c.setTimeout(loop, 1);
    await expect(c.runAll()).rejects.toThrow(/keeps rescheduling itself/);
    expect(c.pendingTimers()).toBe(1);
    const at = c.now();
    await c.advance(1);
    expect(fired).toBe(at + 1); // the refused timer still fires on the next advance
    expect(c.pendingTimers()).toBe(1);
  }, 60_000);

  it('runAll refusing a runaway timer after another timer threw rejects with that first error', async () => {
    const c = new FakeClock();
    const first = new Error('first');
    c.setTimeout(() => {
      throw first;
    }, 1);
    const loop = (): void => void c.setTimeout(loop, 1);
    c.setTimeout(loop, 1);
    await expect(c.runAll()).rejects.toBe(first);
    expect(c.pendingTimers()).toBe(1); // the runaway timer, refused, still pending
  }, 60_000);

  it('fires a timer scheduled by a timer at the same instant after its peers, and honours a sibling cleared there', async () => {
    const c = new FakeClock();
    const seen: string[] = [];
    const handles: unknown[] = [];
    c.setTimeout(() => {
      seen.push('a');
      c.setTimeout(() => seen.push('a0'), 0);
      c.clearTimeout(handles[0]);
    }, 5);
    handles.push(c.setTimeout(() => seen.push('b'), 5));
    c.setTimeout(() => seen.push('c'), 5);
    await c.advance(5);
    expect(seen).toEqual(['a', 'c', 'a0']);
    expect(c.pendingTimers()).toBe(0);
  });
});
