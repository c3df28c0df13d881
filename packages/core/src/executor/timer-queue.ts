import type { Clock, TimerHandle } from '../time/clock';

/**
 * One clock timer shared by every pending attempt timeout of a `Resilience` (SPEC §2 "Hot path").
 *
 * Timeouts of one duration expire in the order they were scheduled, so each duration keeps a FIFO doubly-linked
 * list: add and cancel are O(1) and allocate one small entry (reused by the caller where possible). A single clock
 * timer is armed for the earliest head; when no entry is left it is disarmed, so an idle `Resilience` holds no timer
 * (SPEC §11.13).
 */
const SETTLED = Promise.resolve();

/**
 * How many promise hops the queue waits, while entries are pending and no clock timer is armed, before it arms one.
 * Work that settles within them — a cached value, or a trivial Nest handler, whose result crosses rxjs and the
 * interceptor chain in 3–4 hops — never creates a clock timer (a Node `setTimeout` + `clearTimeout` costs more than
 * these hops). Expiry times are fixed at `add`, so arming a few microtasks later moves no deadline.
 */
const ARM_AFTER_HOPS = 8;

export abstract class TimerEntry {
  /** Absolute expiry on the queue's clock. */
  at = 0;
  prev: TimerEntry | undefined = undefined;
  next: TimerEntry | undefined = undefined;
  list: TimerList | undefined = undefined;
  /** Called once when the entry expires (not when it is cancelled). Subclassed, so an entry needs no closure. */
  abstract fire(): void;
}

class TimerList {
  head: TimerEntry | undefined = undefined;
  tail: TimerEntry | undefined = undefined;
  constructor(readonly duration: number) {}
}

export class TimerQueue {
  readonly #clock: Clock;
  readonly #lists = new Map<number, TimerList>();
  #size = 0;
  #armedAt = Infinity;
  #handle: TimerHandle = undefined;
  readonly #onTimer = (): void => this.#expire();
  #armPending = false;
  #armHops = 0;
  readonly #armSoon = (): void => {
    if (this.#size > 0 && this.#armHops < ARM_AFTER_HOPS) {
      this.#armHops++;
      void SETTLED.then(this.#armSoon);
      return;
    }
    this.#armPending = false;
    this.#armHops = 0;
    if (this.#size === 0) return;
    const at = this.#earliest();
    if (at < this.#armedAt) this.#arm(at);
  };

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  get size(): number {
    return this.#size;
  }

  /** Schedules `entry` to fire `duration` ms after `now` (a clock read the caller already has, or a fresh one). */
  add(entry: TimerEntry, duration: number, now = this.#clock.now()): void {
    let list = this.#lists.get(duration);
    if (list === undefined) {
      list = new TimerList(duration);
      this.#lists.set(duration, list);
    }
    entry.at = now + duration;
    entry.list = list;
    entry.next = undefined;
    entry.prev = list.tail;
    if (list.tail === undefined) list.head = entry;
    else list.tail.next = entry;
    list.tail = entry;
    this.#size++;
    // Arm a few promise hops later, not now (ARM_AFTER_HOPS): a call whose work settles by then (a cache hit, an
    // already-resolved promise, a trivial handler) cancels its entry first, and no clock timer is ever created for it.
    if (!this.#armPending && entry.at < this.#armedAt) {
      this.#armPending = true;
      // A reaction on a settled promise, not queueMicrotask: Node's queueMicrotask builds an AsyncResource per call
      // (≈ 120 ns here, more with async hooks on), and this runs once per sequential call.
      void SETTLED.then(this.#armSoon);
    }
  }

  /** Removes a queued entry; a no-op for an entry that already fired or was cancelled. */
  cancel(entry: TimerEntry): void {
    const list = entry.list;
    if (list === undefined) return;
    this.#unlink(list, entry);
    if (this.#size === 0) this.#disarm();
  }

  #unlink(list: TimerList, entry: TimerEntry): void {
    if (entry.prev === undefined) list.head = entry.next;
    else entry.prev.next = entry.next;
    if (entry.next === undefined) list.tail = entry.prev;
    else entry.next.prev = entry.prev;
    entry.prev = entry.next = entry.list = undefined;
    this.#size--;
    // Empty lists stay: durations are few (one per timeout option), and re-creating them per call costs more.
  }

  #arm(at: number): void {
    if (this.#handle !== undefined) this.#clock.clearTimeout(this.#handle);
    this.#armedAt = at;
    this.#handle = this.#clock.setTimeout(this.#onTimer, Math.max(0, at - this.#clock.now()));
  }

  #disarm(): void {
    if (this.#handle !== undefined) this.#clock.clearTimeout(this.#handle);
    this.#handle = undefined;
    this.#armedAt = Infinity;
  }

  #expire(): void {
    this.#handle = undefined;
    this.#armedAt = Infinity;
    const now = this.#clock.now();
    // Collect first, then fire: a fired callback may add or cancel entries.
    const due: TimerEntry[] = [];
    for (const list of this.#lists.values()) {
      while (list.head !== undefined && list.head.at <= now) {
        const e = list.head;
        this.#unlink(list, e);
        due.push(e);
      }
    }
    for (const e of due) e.fire();
    if (this.#size === 0) return;
    const earliest = this.#earliest();
    if (earliest < this.#armedAt) this.#arm(earliest);
  }

  #earliest(): number {
    let earliest = Infinity;
    for (const list of this.#lists.values())
      if (list.head !== undefined && list.head.at < earliest) earliest = list.head.at;
    return earliest;
  }
}
