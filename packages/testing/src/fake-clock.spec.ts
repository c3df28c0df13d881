import { AsyncLocalStorage } from 'node:async_hooks';
import { FakeClock, flushMicrotasks } from './fake-clock';

describe('FakeClock', () => {
  it('fires each timer in the async context it was scheduled from, as Node timers do', async () => {
    const scope = new AsyncLocalStorage<string>();
    const clock = new FakeClock();
    const seen: (string | undefined)[] = [];
    scope.run('a', () => clock.setTimeout(() => seen.push(scope.getStore()), 10));
    scope.run('b', () => clock.setTimeout(() => seen.push(scope.getStore()), 5));
    clock.setTimeout(() => seen.push(scope.getStore()), 7);
    await scope.run('advancing', () => clock.advance(10));
    scope.run('c', () => clock.setTimeout(() => seen.push(scope.getStore()), 1));
    await clock.runAll();
    expect(seen).toEqual(['b', undefined, 'a', 'c']);
  });

  it('starts at the given time and reads it without advancing', () => {
    expect(new FakeClock().now()).toBe(0);
    const c = new FakeClock(1234);
    expect(c.now()).toBe(1234);
    expect(c.now()).toBe(1234);
  });

  it('rejects a non-finite start and a negative advance', async () => {
    expect(() => new FakeClock(Number.NaN)).toThrow(/start must be a finite number, got NaN/);
    await expect(new FakeClock().advance(-1)).rejects.toThrow(/ms must be a finite number ≥ 0, got -1/);
  });

  it('fires due timers in time order, ties in scheduling order, each at its own time', async () => {
    const c = new FakeClock();
    const seen: string[] = [];
    c.setTimeout(() => seen.push(`c@${c.now()}`), 30);
    c.setTimeout(() => seen.push(`a@${c.now()}`), 10);
    c.setTimeout(() => seen.push(`b1@${c.now()}`), 20);
    c.setTimeout(() => seen.push(`b2@${c.now()}`), 20);
    await c.advance(25);
    expect(seen).toEqual(['a@10', 'b1@20', 'b2@20']);
    expect(c.now()).toBe(25);
    expect(c.pendingTimers()).toBe(1);
    await c.advance(5);
    expect(seen).toEqual(['a@10', 'b1@20', 'b2@20', 'c@30']);
    expect(c.pendingTimers()).toBe(0);
  });

  it('fires timers scheduled by timers when they fall inside the advanced span', async () => {
    const c = new FakeClock();
    const seen: number[] = [];
    c.setTimeout(() => {
      seen.push(c.now());
      c.setTimeout(() => seen.push(c.now()), 5);
      c.setTimeout(() => seen.push(c.now()), 50);
    }, 10);
    await c.advance(20);
    expect(seen).toEqual([10, 15]);
    expect(c.pendingTimers()).toBe(1);
    await c.runAll();
    expect(seen).toEqual([10, 15, 60]);
    expect(c.now()).toBe(60);
  });

  it('treats negative, NaN and zero delays as due now', async () => {
    const c = new FakeClock(100);
    const seen: number[] = [];
    c.setTimeout(() => seen.push(1), -5);
    c.setTimeout(() => seen.push(2), Number.NaN);
    c.setTimeout(() => seen.push(3), 0);
    await c.advance(0);
    expect(seen).toEqual([1, 2, 3]);
    expect(c.now()).toBe(100);
  });

  it('never fires a timer with an infinite delay (systemClock never does), and runAll leaves it pending', async () => {
    const c = new FakeClock(100);
    const seen: string[] = [];
    c.setTimeout(() => seen.push(`forever@${c.now()}`), Number.POSITIVE_INFINITY);
    c.setTimeout(() => seen.push(`past@${c.now()}`), Number.NEGATIVE_INFINITY);
    await c.advance(0);
    expect(seen).toEqual(['past@100']);
    await c.advance(1e12);
    expect(seen).toEqual(['past@100']);
    expect(c.pendingTimers()).toBe(1);
    c.setTimeout(() => seen.push(`later@${c.now()}`), 5);
    await c.runAll();
    expect(seen).toEqual(['past@100', `later@${1e12 + 105}`]);
    expect(c.now()).toBe(1e12 + 105);
    expect(c.pendingTimers()).toBe(1);
  });

  it('never moves time backwards when an advance runs inside a timer or alongside a longer one', async () => {
    const c = new FakeClock();
    const seen: string[] = [];
    c.setTimeout(() => {
      void c.advance(5); // ends at 10 + 5, after the outer advance reached 20
    }, 10);
    c.setTimeout(() => seen.push(`b@${c.now()}`), 12);
    await c.advance(20);
    await flushMicrotasks();
    expect(seen).toEqual(['b@12']);
    expect(c.now()).toBe(20);
    const short = c.advance(1);
    await c.advance(100);
    await short;
    expect(c.now()).toBe(120);
  });

  it('clearTimeout cancels and is idempotent; unknown handles are ignored', async () => {
    const c = new FakeClock();
    const fired: number[] = [];
    const h = c.setTimeout(() => fired.push(1), 10);
    c.setTimeout(() => fired.push(2), 10);
    c.clearTimeout(h);
    c.clearTimeout(h);
    c.clearTimeout(undefined);
    c.clearTimeout({});
    expect(c.pendingTimers()).toBe(1);
    await c.advance(10);
    expect(fired).toEqual([2]);
  });

  it('runs awaited continuations between timers', async () => {
    const c = new FakeClock();
    const steps: string[] = [];
    const flow = (async () => {
      await c.sleep(10);
      steps.push(`slept1@${c.now()}`);
      await Promise.resolve();
      await Promise.resolve();
      await c.sleep(10); // scheduled by a continuation at t=10, due at 20
      steps.push(`slept2@${c.now()}`);
    })();
    await c.advance(20);
    expect(steps).toEqual(['slept1@10', 'slept2@20']);
    await flow;
  });

  it('sleep rejects with the abort reason, removes its timer and listener', async () => {
    const c = new FakeClock();
    const ac = new AbortController();
    const reason = new Error('stop');
    const p = c.sleep(100, ac.signal);
    expect(c.pendingTimers()).toBe(1);
    ac.abort(reason);
    await expect(p).rejects.toBe(reason);
    expect(c.pendingTimers()).toBe(0);
    // an already-aborted signal rejects without scheduling anything
    await expect(c.sleep(5, ac.signal)).rejects.toBe(reason);
    expect(c.pendingTimers()).toBe(0);
  });

  it('sleep removes its abort listener when it completes normally', async () => {
    const c = new FakeClock();
    const ac = new AbortController();
    let removed = 0;
    const orig = ac.signal.removeEventListener.bind(ac.signal);
    ac.signal.removeEventListener = ((type: string, l: any, o?: any) => {
      removed++;
      orig(type, l, o);
    }) as typeof ac.signal.removeEventListener;
    const p = c.sleep(5, ac.signal);
    await c.advance(5);
    await expect(p).resolves.toBeUndefined();
    expect(removed).toBe(1);
    ac.abort(); // nothing listens any more: no late rejection
    await flushMicrotasks();
  });

  it('runAll leaves no timers and refuses a self-rescheduling timer forever', async () => {
    const c = new FakeClock();
    for (let i = 0; i < 100; i++) c.setTimeout(() => {}, i * 3);
    await c.runAll();
    expect(c.pendingTimers()).toBe(0);
    expect(c.now()).toBe(297);
    const loop = (): void => {
      c.setTimeout(loop, 1);
    };
    loop();
    await expect(c.runAll()).rejects.toThrow(/keeps rescheduling itself/);
    c.clearTimeout(undefined);
  }, 60_000);

  it('does not move time backwards when runAll meets an overdue timer', async () => {
    const c = new FakeClock();
    c.setTimeout(() => {}, 10);
    await c.advance(5);
    expect(c.now()).toBe(5);
    await c.runAll();
    expect(c.now()).toBe(10);
  });
});
