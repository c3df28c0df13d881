import { FakeClock, seededRandom } from '@ballast/testing';
import { Resilience, type ResilienceOptions } from '../resilience';
import type { ResilienceEvent } from '../events';
import type { ResiliencePolicy } from '../policy/resilience-policy';

export interface Setup {
  readonly clock: FakeClock;
  readonly resilience: Resilience;
  /** Every event, in emission order. */
  readonly events: ResilienceEvent[];
  ofType<T extends ResilienceEvent['type']>(type: T): Extract<ResilienceEvent, { type: T }>[];
}

/** A Resilience on a FakeClock with a seeded random source and an event recorder. */
export function setup(policies: ResiliencePolicy[], extra: Partial<ResilienceOptions> = {}): Setup {
  const clock = new FakeClock();
  const resilience = new Resilience({ policies, clock, random: seededRandom(1), ...extra });
  const events: ResilienceEvent[] = [];
  resilience.on((e) => events.push(e));
  const ofType = <T extends ResilienceEvent['type']>(type: T): Extract<ResilienceEvent, { type: T }>[] =>
    events.filter((e): e is Extract<ResilienceEvent, { type: T }> => e.type === type);
  return { clock, resilience, events, ofType };
}

/** A promise whose settlement the test controls. */
export function deferred<T = unknown>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Captures how a promise settles without leaving it unhandled. */
export function settle<T>(p: Promise<T>) {
  const state: { done: boolean; value?: T; error?: unknown } = { done: false };
  p.then(
    (v) => {
      state.done = true;
      state.value = v;
    },
    (e: unknown) => {
      state.done = true;
      state.error = e;
    },
  );
  return state;
}

export const infraError = (msg = 'boom') => Object.assign(new Error(msg), { code: 'ECONNRESET' });
