import { AsyncResource } from 'node:async_hooks';
import { systemClock, type Clock, type TimerHandle } from '../time/clock';

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
 * When the queue arms its clock timer. Not at `add`: a call whose work settles soon (a cached value, a trivial Nest
 * handler, whose result crosses rxjs and the interceptor chain in 3–4 promise hops) cancels its entry first and never
 * creates a Node timer, which costs more (`setTimeout` + `clearTimeout` ≈ 0.5 µs) than waiting. Expiry times are fixed
 * at `add`, so arming later moves no deadline.
 *
 * - On `systemClock`: in the event loop's check phase (one `setImmediate`), after every promise job of the current
 *   turn. One check serves every entry added in that turn, so sequential calls in one burst share it and a call costs
 *   no promise of the queue's own. Node's own timers could not have fired any earlier.
 * - On any other clock (`FakeClock` in tests, a user's clock): after up to ARM_AFTER_HOPS promise hops, since such a
 *   clock's time may not follow the event loop (a fake clock advances between promise jobs).
 */
const ARM_AFTER_HOPS = 8;

/**
 * The async context the queue arms its timers in: none of any call's. A Node timer (or immediate) keeps the
 * AsyncLocalStorage stores of the context that created it, and the queue re-arms from its own timer's callback, so
 * arming from whichever call came first would pin that request's stores (a user's request-scoped data, its trace
 * context) for as long as the queue stays armed. Created when the module loads, outside any request.
 */
const QUEUE_SCOPE = new AsyncResource('ballast.timer-queue');

/**
 * An entry of the queue. It is an AsyncResource, so it fires in the async context it was created in — its own
 * call's, whose retry or fallback then runs with that request's stores (trace context, logger fields), not with
 * those of whichever call happened to arm the shared timer (with a request-scoped tenant or trace, that would run one
 * request's retry as another request). Creating it costs ≈ 10 ns, ≈ 80 ns once async hooks are on (pipeline bench).
 */
export abstract class TimerEntry extends AsyncResource {
  /** Absolute expiry on the queue's clock. */
  at = 0;
  prev: TimerEntry | undefined = undefined;
  next: TimerEntry | undefined = undefined;
  list: TimerList | undefined = undefined;
  constructor() {
    super('ballast.timeout');
  }

  /** Called once when the entry expires (not when it is cancelled). Subclassed, so an entry needs no closure. */
  abstract fire(): void;
}

function fireEntry(this: TimerEntry): void {
  this.fire();
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
  /** An arm check is scheduled (a setImmediate, or a chain of promise hops). */
  #armPending = false;
  #armHops = 0;
  /** Whether arm checks wait for the event loop's check phase (system clock) rather than promise hops. */
  readonly #onLoop: boolean;
  readonly #armOnLoop = (): void => {
    this.#armPending = false;
    this.#armIfDue();
  };
  readonly #armAfterHops = (): void => {
    if (this.#size > 0 && this.#armHops < ARM_AFTER_HOPS) {
      this.#armHops++;
      void SETTLED.then(this.#armAfterHops);
      return;
    }
    this.#armPending = false;
    this.#armHops = 0;
    this.#armIfDue();
  };

  readonly #scheduleArm = (): void => {
    if (this.#onLoop) setImmediate(this.#armOnLoop);
    // A reaction on a settled promise, not queueMicrotask: Node's queueMicrotask builds an AsyncResource per call
    // (≈ 120 ns here, more with async hooks on).
    else void SETTLED.then(this.#armAfterHops);
  };

  constructor(clock: Clock) {
    this.#clock = clock;
    this.#onLoop = clock === systemClock;
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
    // Arm later, not now (see ARM_AFTER_HOPS): a call whose work settles by then cancels its entry first.
    if (!this.#armPending && entry.at < this.#armedAt) {
      this.#armPending = true;
      QUEUE_SCOPE.runInAsyncScope(this.#scheduleArm);
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

  /** Arms the clock timer for the earliest entry, unless one is armed for that time or earlier already. */
  #armIfDue(): void {
    if (this.#size === 0) return;
    const at = this.#earliest();
    if (at < this.#armedAt) this.#arm(at);
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
    for (const e of due) e.runInAsyncScope(fireEntry, e);
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
