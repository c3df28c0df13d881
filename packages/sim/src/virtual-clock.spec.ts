import { VirtualClock } from './virtual-clock';

describe('VirtualClock', () => {
  it('fires timers in time order, ties in scheduling order, and ends at the target time', async () => {
    const c = new VirtualClock();
    const seen: string[] = [];
    c.setTimeout(() => seen.push(`b@${c.now()}`), 20);
    c.setTimeout(() => seen.push(`a@${c.now()}`), 10);
    c.setTimeout(() => seen.push(`c@${c.now()}`), 20);
    c.setTimeout(() => seen.push('late'), 31);
    await c.runUntil(30);
    expect(seen).toEqual(['a@10', 'b@20', 'c@20']);
    expect(c.now()).toBe(30);
    expect(c.pending).toBe(1);
    expect(c.fired).toBe(3);
  });

  it('clearTimeout removes a pending timer; clearing twice or a foreign handle is harmless', async () => {
    const c = new VirtualClock();
    let fired = false;
    const h = c.setTimeout(() => (fired = true), 5);
    c.clearTimeout(h);
    c.clearTimeout(h);
    c.clearTimeout(undefined);
    c.clearTimeout({});
    await c.runUntil(10);
    expect(fired).toBe(false);
    expect(c.pending).toBe(0);
  });

  it('treats negative and NaN delays as zero and fires timers scheduled by timers', async () => {
    const c = new VirtualClock({ start: 100 });
    const times: number[] = [];
    c.setTimeout(() => {
      times.push(c.now());
      c.setTimeout(() => times.push(c.now()), 5);
    }, -3);
    c.setTimeout(() => times.push(c.now()), Number.NaN);
    await c.runUntil(200);
    expect(times).toEqual([100, 100, 105]);
  });

  it.each(['tick', 'immediate'] as const)(
    "drains deep promise chains before time moves ('%s' barrier)",
    async (drain) => {
      const c = new VirtualClock({ drain });
      const seen: number[] = [];
      // A continuation 200 awaits deep after the first event must still observe t = 10, then schedule at 10 + 5.
      const deep = async (n: number): Promise<void> => {
        if (n > 0) {
          await null;
          return deep(n - 1);
        }
        seen.push(c.now());
        c.setTimeout(() => seen.push(c.now()), 5);
      };
      c.setTimeout(() => void deep(200), 10);
      c.setTimeout(() => seen.push(c.now()), 12);
      await c.runUntil(100);
      expect(seen).toEqual([10, 12, 15]);
    },
  );

  it('sleep resolves after virtual time passes', async () => {
    const c = new VirtualClock();
    let woke = -1;
    void c.sleep(42).then(() => (woke = c.now()));
    await c.runUntil(41);
    expect(woke).toBe(-1);
    await c.runUntil(50);
    expect(woke).toBe(42);
  });

  it('rejects running backwards and a non-finite start', async () => {
    const c = new VirtualClock({ start: 5 });
    await expect(c.runUntil(4)).rejects.toThrow(/before now/);
    expect(() => new VirtualClock({ start: Number.POSITIVE_INFINITY })).toThrow(/finite/);
  });

  it('handles hundreds of thousands of timers quickly', async () => {
    const c = new VirtualClock();
    let n = 0;
    const tick = (): void => {
      n++;
      if (n < 300_000) c.setTimeout(tick, 1);
    };
    for (let i = 0; i < 10; i++) c.setTimeout(tick, i / 10);
    const t0 = performance.now();
    await c.runUntil(200_000);
    expect(n).toBeGreaterThanOrEqual(300_000);
    expect(performance.now() - t0).toBeLessThan(10_000);
  });
});
