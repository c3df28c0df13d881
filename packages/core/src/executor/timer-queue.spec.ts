import { FakeClock } from '@ballast/testing';
import { systemClock } from '../time/clock';
import { trackNodeTimers, type NodeTimerTracker } from '../__tests__/kit';
import { TimerEntry, TimerQueue } from './timer-queue';

/**
 * The shared timer queue arms its one clock timer late, so work that settles soon never creates a Node timer (SPEC
 * §2 "Hot path"), and disarms as soon as it is empty (SPEC §11.13). On the system clock the arm check runs in the
 * event loop's check phase; on any other clock after a few promise hops.
 */

class Entry extends TimerEntry {
  fired = 0;
  override fire(): void {
    this.fired++;
  }
}

const hops = async (n: number): Promise<void> => {
  for (let i = 0; i < n; i++) await Promise.resolve();
};
const checkPhase = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const immediates = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Immediate').length;

describe('TimerQueue on a clock other than the system clock (promise hops)', () => {
  it('an entry cancelled within a few hops never arms a clock timer', async () => {
    const clock = new FakeClock();
    const q = new TimerQueue(clock);
    const e = new Entry();
    q.add(e, 100);
    await hops(2);
    q.cancel(e);
    await hops(20);
    expect(clock.pendingTimers()).toBe(0);
    expect(q.size).toBe(0);
  });

  it('a pending entry arms one timer, fires at its expiry, and the queue disarms when empty', async () => {
    const clock = new FakeClock();
    const q = new TimerQueue(clock);
    const a = new Entry();
    const b = new Entry();
    q.add(a, 100);
    q.add(b, 100);
    await hops(20);
    expect(clock.pendingTimers()).toBe(1);
    await clock.advance(99);
    expect(a.fired + b.fired).toBe(0);
    await clock.advance(1);
    expect([a.fired, b.fired]).toEqual([1, 1]);
    expect(clock.pendingTimers()).toBe(0);
  });
});

describe('TimerQueue on the system clock (event-loop check phase)', () => {
  let timers: NodeTimerTracker;
  beforeEach(() => {
    timers = trackNodeTimers();
  });
  afterEach(() => timers.restore());

  it('entries added and cancelled within one turn never create a Node timer', async () => {
    const q = new TimerQueue(systemClock);
    for (let i = 0; i < 1000; i++) {
      const e = new Entry();
      q.add(e, 60_000);
      await hops(3);
      q.cancel(e);
    }
    await checkPhase();
    expect(timers.created()).toBe(0);
    expect(q.size).toBe(0);
  });

  it('one check serves every entry added in a turn: a single Immediate, then a single Node timer', async () => {
    const q = new TimerQueue(systemClock);
    const before = immediates();
    const entries = Array.from({ length: 100 }, () => new Entry());
    for (const e of entries) q.add(e, 60_000);
    expect(immediates()).toBe(before + 1);
    expect(timers.created()).toBe(0);
    await checkPhase();
    expect([timers.created(), timers.live()]).toEqual([1, 1]);
    for (const e of entries) q.cancel(e);
    // Disarmed at once when the last entry goes (SPEC §11.13), not on a later turn.
    expect(timers.live()).toBe(0);
  });

  it('an entry that outlives the turn fires from the armed Node timer', async () => {
    const q = new TimerQueue(systemClock);
    const fired = new Promise<void>((resolve) => {
      class Resolving extends TimerEntry {
        override fire(): void {
          resolve();
        }
      }
      q.add(new Resolving(), 0);
    });
    await fired;
    expect(q.size).toBe(0);
    expect([timers.created(), timers.live()]).toEqual([1, 0]);
  });
});
