import { Criticality, isCriticality } from './criticality';
import { OptionProblems } from './option-checks';
import { RingDeque } from './ring-deque';

/** Options of {@link CoDelQueue}. Durations are milliseconds. @public */
export interface CoDelQueueOptions {
  /** Most waiters held at once (integer ≥ 0). */
  readonly maxSize: number;
  /** Sojourn allowed while congested; unset = never shed (≥ 0 and < interval). */
  readonly target?: number | undefined;
  /** Congestion window, and the sojourn allowed while not congested (> 0, default 100). */
  readonly interval?: number | undefined;
  /** Serve the newest waiter (of the tier being served) first while congested (default false). */
  readonly adaptiveLifo?: boolean | undefined;
  /**
   * Serve the highest non-empty criticality tier first, scale allowances by criticality, and let a
   * higher-criticality arrival displace a waiter from a full queue (default false).
   */
  readonly prioritized?: boolean | undefined;
}

/** Resolved, frozen options of a {@link CoDelQueue}. @public */
export interface ResolvedCoDelQueueOptions {
  readonly maxSize: number;
  readonly target: number | undefined;
  readonly interval: number;
  readonly adaptiveLifo: boolean;
  readonly prioritized: boolean;
}

/** Result of {@link CoDelQueue.push}: `displaced` is the waiter a higher-criticality arrival pushed out. @public */
export type CoDelPushResult<T> = { readonly ok: true; readonly displaced?: T } | { readonly ok: false };

/** Result of {@link CoDelQueue.pop}: the waiter to serve (if any) and the waiters shed on the way. @public */
export interface CoDelPopResult<T> {
  readonly item?: T | undefined;
  /** Shed waiters, lowest criticality first and oldest first within one; a frozen empty array when none. */
  readonly shed: readonly T[];
}

/** Allowance multiplier per criticality tier when `prioritized` (BEST_EFFORT … CRITICAL). @public */
export const CRITICALITY_ALLOWANCE_SCALE: readonly number[] = Object.freeze([0.25, 0.5, 1, 2]);

/** @public */
export const DEFAULT_CODEL_INTERVAL = 100;

const ACCEPTED: CoDelPushResult<never> = Object.freeze({ ok: true });
const REJECTED: CoDelPushResult<never> = Object.freeze({ ok: false });
const NONE_SHED: readonly never[] = Object.freeze([]);
const NOTHING: CoDelPopResult<never> = Object.freeze({ shed: NONE_SHED });

const isFiniteNumber = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

/**
 * Times must be finite: an `Infinity` or NaN arrival would become the last empty instant (never congested again
 * until the queue drains) and a waiter whose sojourn is −∞ or NaN is never shed, hiding the expired waiters
 * queued behind it.
 */
function checkNow(now: number, method: string): void {
  if (!(now - now === 0))
    throw new RangeError(`CoDelQueue.${method}: now must be a finite number of ms, got ${now}`);
}

/**
 * A bounded wait queue managed by CoDel at dequeue time, in the variant Facebook describes in B. Maurer, "Fail at
 * Scale", ACM Queue 13(8), 2015 — after K. Nichols and V. Jacobson, "Controlling Queue Delay", ACM Queue 10(5), 2012.
 *
 * Why: a queue that is never empty is a standing queue — it adds latency without adding throughput. "Empty" means
 * that capacity caught up with demand, not merely that no waiter is queued at this instant. So:
 *
 * - The queue is **drained** — empty at every instant, as far as congestion is concerned — from the moment
 *   capacity catches up until the next `push`, which records that push's time as the last empty instant. Capacity
 *   catches up at `now` when a consumer (a worker, a freed concurrency slot) looks for work and finds none: a
 *   `pop(now)` that finds no waiter at all, or {@link CoDelQueue.idle}`(now)` on an empty queue.
 * - It also catches up when a `pop(t)` serves the last waiter and sheds nothing, once the queue has then stayed
 *   empty for `target` ms (at once when `target` is unset or 0): from `t + target` it is drained, however long the
 *   served call keeps its slot and no consumer looks. An arrival before `t + target` meets the queue as it was:
 *   under overload service empties the queue and arrivals refill it at once, many times a second, and counting
 *   those instants would keep granting the lenient `interval` allowance to a standing queue.
 * - Being emptied by its own shedding (including a `pop` that sheds some waiters and serves the last one), or by
 *   `remove`, is **not** draining: under overload the queue sheds, or its callers give up at their deadlines,
 *   and it refills — exactly the standing queue CoDel must see. Such a queue keeps its last empty instant until a
 *   consumer finds it empty or it is drained by service. (`remove` cannot tell a caller that was merely
 *   cancelled from one that gave up after waiting too long, so it never counts.)
 * - **Congested** at `now` ⇔ not drained and `now − lastEmptyAt ≥ interval` (not empty during the last
 *   `interval`), whether or not waiters are queued at this instant. A new queue starts drained, so a first burst
 *   — like a burst after any drained period — gets `interval` of calm before it counts as congested.
 *
 * With `target` set, `pop(now)` sheds every waiter whose sojourn exceeds its allowance — `target` while congested,
 * `interval` otherwise — and serves the next. Short bursts queue normally; only a standing queue is trimmed hard.
 *
 * - `prioritized`: allowances are scaled by criticality tier (BEST_EFFORT ×0.25, DEGRADED ×0.5, NORMAL ×1,
 *   CRITICAL ×2); `pop` serves the **highest non-empty tier** first (strict priority, FIFO within a tier); and a
 *   full queue admits an arrival of strictly higher criticality by displacing the lowest-criticality waiter (the
 *   oldest among equals).
 * - `adaptiveLifo`: while congested the newest waiter (of the tier being served) is served first — it still has a
 *   caller waiting for it; the oldest probably timed out already. FIFO otherwise.
 *
 * Shedding is eager and per waiter: one `pop` removes every waiter already over its own tier's allowance, in every
 * tier, not only those in front of the one it serves. Since an allowance never grows while a waiter is queued
 * (the queue cannot drain around it) and sojourns only grow, such a waiter could never be served later anyway;
 * eager shedding fails it sooner.
 *
 * Structure: one ring-buffer deque per criticality tier (a single one when not prioritized). Within a tier arrival
 * order equals sojourn order, so expired waiters are a prefix of each deque. `push` is O(1) amortised and allocates
 * nothing unless it displaces; `pop` is O(tiers + shed); `idle` is O(1) and allocates nothing; `remove` is O(n).
 * @public
 */
export class CoDelQueue<T> {
  readonly options: ResolvedCoDelQueueOptions;
  private readonly tiers: Array<RingDeque<T>>;
  private count = 0;
  /** The latest instant the queue drained (or, after that, the push that ended the drained period). */
  private lastEmptyAt = -Infinity;
  /** True from the moment the queue drains until the next push (a new queue starts drained). */
  private drained = true;
  /** When a pop served the last waiter and shed none: the instant the still-empty queue drains; else Infinity. */
  private drainsAt = Infinity;

  constructor(options: CoDelQueueOptions) {
    const { maxSize, target } = options;
    const interval = options.interval ?? DEFAULT_CODEL_INTERVAL;
    const adaptiveLifo = options.adaptiveLifo ?? false;
    const prioritized = options.prioritized ?? false;
    const intervalOk = isFiniteNumber(interval) && interval > 0;
    new OptionProblems('CoDelQueue')
      .check(Number.isInteger(maxSize) && maxSize >= 0, 'maxSize', 'an integer ≥ 0', maxSize)
      .check(
        target === undefined || (isFiniteNumber(target) && target >= 0 && (!intervalOk || target < interval)),
        'target',
        'a finite number of ms ≥ 0 and < interval',
        target,
      )
      .check(intervalOk, 'interval', 'a finite number of ms > 0', interval)
      .check(typeof adaptiveLifo === 'boolean', 'adaptiveLifo', 'a boolean', adaptiveLifo)
      .check(typeof prioritized === 'boolean', 'prioritized', 'a boolean', prioritized)
      .throwIfAny();
    this.options = Object.freeze({ maxSize, target, interval, adaptiveLifo, prioritized });
    const initial = Math.min(Math.max(maxSize, 1), 16);
    this.tiers = Array.from({ length: prioritized ? 4 : 1 }, () => new RingDeque<T>(initial));
  }

  /** Waiters currently queued. */
  get size(): number {
    return this.count;
  }

  /**
   * True when the queue has not been empty during the last `interval` ms (see the class comment): it is not
   * drained and `now − lastEmptyAt ≥ interval`. May be true while no waiter is queued, when the queue was emptied
   * by shedding or `remove` (or served empty less than `target` ago) and no consumer has looked since.
   */
  congested(now: number): boolean {
    return !this.drained && now < this.drainsAt && now - this.lastEmptyAt >= this.options.interval;
  }

  /**
   * A consumer looked for work at `now` and found none — e.g. a concurrency slot was released while nobody
   * waited. On an empty queue this drains it: records `now` as the last empty instant and keeps the queue calm
   * until the next push (the same as a `pop(now)` that finds no waiter); on a non-empty queue it does nothing.
   * O(1), no allocation.
   */
  idle(now: number): void {
    checkNow(now, 'idle');
    if (this.count === 0) this.drain(now);
  }

  /**
   * Enqueues `item` arriving at `now`. A full queue rejects (`{ ok: false }`) unless `prioritized` and a waiter of
   * strictly lower criticality exists, which is then displaced and returned. Throws a `RangeError` for a
   * criticality outside 0…3 or a non-finite `now`. A push onto a drained queue records `now` as its last empty
   * instant.
   */
  push(item: T, now: number, criticality: Criticality = Criticality.NORMAL): CoDelPushResult<T> {
    checkNow(now, 'push');
    if (!isCriticality(criticality))
      throw new RangeError(`CoDelQueue.push: criticality must be 0, 1, 2 or 3, got ${String(criticality)}`);
    const prioritized = this.options.prioritized;
    const tier = this.tiers[prioritized ? criticality : 0]!;
    if (this.count < this.options.maxSize) {
      if (this.drained || now >= this.drainsAt) {
        // Drained until this very arrival: the queue was empty, and counted as empty, up to now.
        this.lastEmptyAt = now;
        this.drained = false;
      }
      this.drainsAt = Infinity;
      tier.pushBack(item, now);
      this.count++;
      return ACCEPTED;
    }
    if (!prioritized) return REJECTED;
    for (let lower = 0; lower < criticality; lower++) {
      const victims = this.tiers[lower]!;
      if (victims.size === 0) continue;
      const displaced = victims.popFront();
      tier.pushBack(item, now);
      return { ok: true, displaced };
    }
    return REJECTED;
  }

  /**
   * Dequeues at `now`. On an empty queue this is a consumer finding no work: see {@link CoDelQueue.idle}.
   * Otherwise sheds every waiter over its allowance (only when `target` is set), then returns the next waiter to
   * serve: from the highest non-empty tier when `prioritized` (else the single tier), the oldest — or the newest
   * while congested with `adaptiveLifo`. Serving the last waiter drains the queue `target` ms later if it is
   * still empty then, unless this pop also shed; shedding alone never does. Throws a `RangeError` for a non-finite
   * `now`.
   */
  pop(now: number): CoDelPopResult<T> {
    checkNow(now, 'pop');
    if (this.count === 0) {
      this.drain(now);
      return NOTHING;
    }
    const { target, interval, adaptiveLifo, prioritized } = this.options;
    // count > 0, so the queue is not drained.
    const congested = now - this.lastEmptyAt >= interval;
    const tiers = this.tiers;
    let shed: T[] | undefined;
    if (target !== undefined) {
      const allowance = congested ? target : interval;
      for (let t = 0; t < tiers.length; t++) {
        const deque = tiers[t]!;
        const limit = prioritized ? allowance * CRITICALITY_ALLOWANCE_SCALE[t]! : allowance;
        while (deque.size > 0 && now - deque.frontTime() > limit) {
          (shed ??= []).push(deque.popFront());
          this.count--;
        }
      }
    }
    if (this.count === 0) return shed === undefined ? NOTHING : { shed };

    let t = tiers.length - 1;
    while (tiers[t]!.size === 0) t--;
    const chosen = tiers[t]!;
    const item = adaptiveLifo && congested ? chosen.popBack() : chosen.popFront();
    // Served the last waiter and shed nobody: drained once it stays empty for the target (see the class comment).
    if (--this.count === 0 && shed === undefined) this.drainsAt = now + (target ?? 0);
    return { item, shed: shed ?? NONE_SHED };
  }

  /**
   * Removes a waiter (by identity), e.g. when its caller gave up. O(n). Returns whether it was queued. Emptying the
   * queue this way does not drain it: a caller giving up after waiting too long is what a standing queue looks
   * like (see the class comment).
   */
  remove(item: T): boolean {
    for (const deque of this.tiers) {
      if (deque.remove(item)) {
        this.count--;
        return true;
      }
    }
    return false;
  }

  /** Visits every waiter with its enqueue time (tier by tier, lowest first; oldest first within a tier). */
  forEach(visit: (item: T, enqueuedAt: number) => void): void {
    for (const deque of this.tiers) deque.forEach(visit);
  }

  /** The queue is empty and counts as empty from `now` until the next push. */
  private drain(now: number): void {
    this.lastEmptyAt = now;
    this.drained = true;
    this.drainsAt = Infinity;
  }
}
