import type { Criticality } from '@ballast/codel';
import type { Clock, TimerHandle } from '../time/clock';
import type { Admission, ParkedAdmission } from './admission';

/** What a parked waiter reports back to: the bulkhead it waits in (it changes on a retune's hand-over). */
export interface WaiterOwner {
  cancelWaiter(waiter: Waiter): void;
  expireWaiter(waiter: Waiter): void;
}

export const QUEUED = 0;
export const GRANTED = 1;
export const SETTLED = 2; // rejected, or cancelled
export type WaiterState = typeof QUEUED | typeof GRANTED | typeof SETTLED;

/** A parked caller. Also the queue item, so parking allocates one object and one promise. */
export class Waiter implements ParkedAdmission {
  readonly result: Promise<Admission>;
  state: WaiterState = QUEUED;
  settle!: (admission: Admission) => void;
  /** The `maxWait` timer, and the clock that armed it. */
  timer: TimerHandle | undefined = undefined;
  timerClock: Clock | undefined = undefined;

  constructor(
    /** The bulkhead it waits in; changes when a retune carries it over (a retune's hand-over). */
    public owner: WaiterOwner,
    readonly criticality: Criticality,
    readonly deadline: number | undefined,
    readonly enqueuedAt: number,
  ) {
    this.result = new Promise<Admission>((resolve) => {
      this.settle = resolve;
    });
  }

  cancel(): void {
    this.owner.cancelWaiter(this);
  }

  /** Arms the `maxWait` timer to fire `ms` from now (replacing any armed one). */
  arm(clock: Clock, ms: number): void {
    this.disarm();
    this.timerClock = clock;
    this.timer = clock.setTimeout(() => {
      this.timer = undefined;
      this.owner.expireWaiter(this);
    }, ms);
  }

  disarm(): void {
    if (this.timer === undefined) return;
    this.timerClock!.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Leaves the queue with `admission` (its timer disarmed); `state` says whether it holds a slot. */
  finish(state: WaiterState, admission: Admission): void {
    this.disarm();
    this.state = state;
    this.settle(admission);
  }
}
