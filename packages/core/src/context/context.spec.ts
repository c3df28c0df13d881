import { FakeClock } from '@ballast/testing';
import { isResilienceError } from '../errors/resilience-error';
import { contextStorage, currentFrame, currentSignal } from './context-storage';
import type { ContextFrame } from './context-storage';
import { Criticality, bindCriticality, currentCriticality } from './criticality';
import { deadlineOn, remainingTime, withDeadline } from './deadline';

describe('withDeadline / remainingTime', () => {
  it('is undefined outside any deadline', () => {
    expect(remainingTime()).toBeUndefined();
    expect(currentFrame()).toBeUndefined();
  });

  it('counts down on the clock that set it, across awaits, and stops at 0', async () => {
    const clock = new FakeClock(1000);
    const seen: (number | undefined)[] = [];
    const done = withDeadline(
      '1s',
      async () => {
        seen.push(remainingTime());
        await clock.sleep(400);
        seen.push(remainingTime());
        await clock.sleep(1000);
        seen.push(remainingTime());
        return 'ok';
      },
      clock,
    );
    await clock.advance(400);
    await clock.advance(1000);
    await expect(done).resolves.toBe('ok');
    expect(seen).toEqual([1000, 600, 0]);
    expect(remainingTime()).toBeUndefined();
  });

  it('returns what fn returns, synchronously', () => {
    const clock = new FakeClock();
    expect(withDeadline(5, () => 42, clock)).toBe(42);
  });

  it('only tightens when nested', () => {
    const clock = new FakeClock();
    withDeadline(
      '100ms',
      () => {
        withDeadline('1s', () => expect(remainingTime()).toBe(100), clock);
        withDeadline('10ms', () => expect(remainingTime()).toBe(10), clock);
        expect(remainingTime()).toBe(100);
      },
      clock,
    );
  });

  it('compares deadlines of different clocks by remaining time and keeps each clock', () => {
    const outer = new FakeClock(0);
    const inner = new FakeClock(50_000);
    withDeadline(
      '100ms',
      () => {
        withDeadline(
          '1s',
          () => {
            expect(currentFrame()?.deadlineClock).toBe(outer);
            expect(deadlineOn(inner)).toBe(50_100);
          },
          inner,
        );
        withDeadline(
          '10ms',
          () => {
            expect(currentFrame()?.deadlineClock).toBe(inner);
            expect(deadlineOn(inner)).toBe(50_010);
            expect(deadlineOn(outer)).toBe(10);
          },
          inner,
        );
      },
      outer,
    );
    expect(deadlineOn(outer)).toBeUndefined();
  });

  it('accepts a zero budget (already expired) and rejects invalid ones', () => {
    const clock = new FakeClock();
    expect(withDeadline(0, () => remainingTime(), clock)).toBe(0);
    let caught: unknown;
    try {
      withDeadline('-1s', () => 1, clock);
    } catch (error) {
      caught = error;
    }
    expect(isResilienceError(caught) && caught.kind === 'configuration').toBe(true);
  });

  it('defaults to the system clock', () => {
    const left = withDeadline('1h', () => remainingTime());
    expect(left).toBeGreaterThan(3_590_000);
    expect(left).toBeLessThanOrEqual(3_600_000);
  });
});

describe('criticality', () => {
  it('re-exports codel values unchanged', () => {
    expect(Criticality).toEqual({ BEST_EFFORT: 0, DEGRADED: 1, NORMAL: 2, CRITICAL: 3 });
  });

  it('defaults to NORMAL and binds for everything fn awaits', async () => {
    expect(currentCriticality()).toBe(Criticality.NORMAL);
    const level = await bindCriticality(Criticality.CRITICAL, async () => {
      await Promise.resolve();
      return bindCriticality(Criticality.BEST_EFFORT, () => currentCriticality());
    });
    expect(level).toBe(Criticality.BEST_EFFORT);
    expect(bindCriticality(Criticality.DEGRADED, () => currentCriticality())).toBe(Criticality.DEGRADED);
    expect(currentCriticality()).toBe(Criticality.NORMAL);
  });

  it('rejects unknown levels', () => {
    expect(() => bindCriticality(7 as Criticality, () => 1)).toThrow(/Invalid criticality/);
  });

  it('keeps the deadline when binding criticality and vice versa', () => {
    const clock = new FakeClock();
    withDeadline(
      '1s',
      () =>
        bindCriticality(Criticality.CRITICAL, () => {
          expect(remainingTime()).toBe(1000);
          withDeadline('2s', () => expect(currentCriticality()).toBe(Criticality.CRITICAL), clock);
          withDeadline('10ms', () => expect(currentCriticality()).toBe(Criticality.CRITICAL), clock);
        }),
      clock,
    );
  });
});

describe('currentSignal', () => {
  it('is the innermost call signal, inherited through deadline and criticality frames', async () => {
    expect(currentSignal()).toBeUndefined();
    const controller = new AbortController();
    const frame: ContextFrame = {
      deadline: undefined,
      deadlineClock: undefined,
      criticality: undefined,
      call: { signal: controller.signal },
    };
    const clock = new FakeClock();
    const signals = await contextStorage.run(frame, async () => {
      await Promise.resolve();
      return [
        currentSignal(),
        withDeadline('1s', () => currentSignal(), clock),
        bindCriticality(Criticality.CRITICAL, () => currentSignal()),
      ];
    });
    expect(signals).toEqual([controller.signal, controller.signal, controller.signal]);
  });
});
