import { clockOn, MAX_TIMER_DELAY, systemClock, type TimerHost } from './clock';

/** A host with a manual time and a list of armed timers, so the long-delay path runs without real waiting. */
function manualHost() {
  let time = 0;
  let nextId = 0;
  const armed = new Map<number, { at: number; callback: () => void; ms: number }>();
  const host: TimerHost = {
    now: () => time,
    setTimeout: (callback, ms) => {
      const id = ++nextId;
      armed.set(id, { at: time + ms, callback, ms });
      return id;
    },
    clearTimeout: (handle) => {
      armed.delete(handle as number);
    },
  };
  /** Moves time to `t`, firing due timers in order. */
  const advanceTo = (t: number): void => {
    for (;;) {
      const due = [...armed.entries()].filter(([, x]) => x.at <= t).sort((a, b) => a[1].at - b[1].at)[0];
      if (due === undefined) break;
      armed.delete(due[0]);
      time = due[1].at;
      due[1].callback();
    }
    time = t;
  };
  return { host, armed, advanceTo };
}

describe('clockOn (the host timers behind systemClock)', () => {
  it('passes delays the host can hold straight through', () => {
    const { host, armed, advanceTo } = manualHost();
    const clock = clockOn(host, 100);
    let fired = 0;
    clock.setTimeout(() => fired++, 100);
    expect([...armed.values()].map((x) => x.ms)).toEqual([100]);
    advanceTo(100);
    expect(fired).toBe(1);
  });

  it('chains a longer delay through host timers of at most maxDelay, firing once at the due time', () => {
    const { host, armed, advanceTo } = manualHost();
    const clock = clockOn(host, 100);
    const firedAt: number[] = [];
    clock.setTimeout(() => firedAt.push(host.now()), 250);
    expect([...armed.values()].map((x) => x.ms)).toEqual([100]);
    advanceTo(249);
    expect(firedAt).toEqual([]);
    expect([...armed.values()].map((x) => x.ms)).toEqual([50]); // 100, 100, then what is left
    advanceTo(1000);
    expect(firedAt).toEqual([250]);
    expect(armed.size).toBe(0);
  });

  it('clearTimeout stops a chained delay at any link', () => {
    const { host, armed, advanceTo } = manualHost();
    const clock = clockOn(host, 100);
    let fired = 0;
    const handle = clock.setTimeout(() => fired++, 1000);
    advanceTo(350);
    expect(armed.size).toBe(1);
    clock.clearTimeout(handle);
    expect(armed.size).toBe(0);
    advanceTo(5000);
    expect(fired).toBe(0);
  });

  it('systemClock never hands Node a delay above 2³¹−1 ms (Node would fire it after 1 ms, with a warning)', () => {
    const warnings: string[] = [];
    const onWarning = (w: Error): void => {
      warnings.push(w.name);
    };
    process.on('warning', onWarning);
    const realSetTimeout = global.setTimeout;
    const delays: number[] = [];
    global.setTimeout = ((cb: () => void, ms?: number) => {
      delays.push(ms ?? 0);
      return realSetTimeout(cb, ms);
    }) as typeof setTimeout;
    try {
      const handle = systemClock.setTimeout(() => {
        throw new Error('a 600 h timer must not fire');
      }, 600 * 3_600_000);
      systemClock.clearTimeout(handle);
    } finally {
      global.setTimeout = realSetTimeout;
      process.off('warning', onWarning);
    }
    expect(delays).toEqual([MAX_TIMER_DELAY]);
    expect(warnings).toEqual([]);
  });
});
