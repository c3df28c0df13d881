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
  /** Serve the newest waiter first while congested (default false). */
  readonly adaptiveLifo?: boolean | undefined;
  /** Scale allowances by criticality and let a higher-criticality arrival displace a waiter (default false). */
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
 * A bounded wait queue managed by CoDel at dequeue time, in the variant Facebook describes in B. Maurer, "Fail at
 * Scale", ACM Queue 13(8), 2015 — after K. Nichols and V. Jacobson, "Controlling Queue Delay", ACM Queue 10(5), 2012.
 *
 * Why: a queue that is never empty is a standing queue — it adds latency without adding throughput. So the queue
 * is **congested** when it has not been empty during the last `interval` ms (`size > 0` and
 * `now − lastEmptyAt ≥ interval`). With `target` set, `pop(now)` sheds every waiter whose sojourn exceeds its
 * allowance — `target` while congested, `interval` otherwise — and serves the next. Short bursts queue normally;
 * only a standing queue is trimmed hard.
 *
 * - `adaptiveLifo`: while congested the newest waiter is served first (it still has a caller waiting for it; the
 *   oldest probably timed out already). FIFO otherwise.
 * - `prioritized`: allowances are scaled by criticality tier (BEST_EFFORT ×0.25, DEGRADED ×0.5, NORMAL ×1,
 *   CRITICAL ×2), and a full queue admits an arrival of strictly higher criticality by displacing the
 *   lowest-criticality waiter (the oldest among equals). Service order stays arrival order (or newest first).
 *
 * Shedding is eager: one `pop` removes every waiter already over its allowance, not only those in front of the one
 * it serves. Since an allowance never grows while the queue stays non-empty and sojourns only grow, such a waiter
 * could never be served later anyway; eager shedding just fails it sooner.
 *
 * Structure: one ring-buffer deque per criticality tier (a single one when not prioritized). Within a tier arrival
 * order equals sojourn order, so expired waiters are a prefix of each deque. `push` is O(1) amortised and allocates
 * nothing unless it displaces; `pop` is O(tiers + shed); `remove` is O(n).
 * @public
 */
export class CoDelQueue<T> {
  readonly options: ResolvedCoDelQueueOptions;
  private readonly tiers: Array<RingDeque<T>>;
  private count = 0;
  private nextSeq = 0;
  /** The latest time the queue was known to be empty. */
  private lastEmptyAt = -Infinity;

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

  /** True when the queue has not been empty during the last `interval` ms. */
  congested(now: number): boolean {
    return this.count > 0 && now - this.lastEmptyAt >= this.options.interval;
  }

  /**
   * Enqueues `item` arriving at `now`. A full queue rejects (`{ ok: false }`) unless `prioritized` and a waiter of
   * strictly lower criticality exists, which is then displaced and returned. Throws a `RangeError` for a
   * criticality outside 0…3.
   */
  push(item: T, now: number, criticality: Criticality = Criticality.NORMAL): CoDelPushResult<T> {
    if (!isCriticality(criticality))
      throw new RangeError(`CoDelQueue.push: criticality must be 0, 1, 2 or 3, got ${String(criticality)}`);
    if (this.count === 0) this.lastEmptyAt = now;
    const prioritized = this.options.prioritized;
    const tier = this.tiers[prioritized ? criticality : 0]!;
    if (this.count < this.options.maxSize) {
      tier.pushBack(item, now, this.nextSeq++);
      this.count++;
      return ACCEPTED;
    }
    if (!prioritized) return REJECTED;
    for (let lower = 0; lower < criticality; lower++) {
      const victims = this.tiers[lower]!;
      if (victims.size === 0) continue;
      const displaced = victims.popFront();
      tier.pushBack(item, now, this.nextSeq++);
      return { ok: true, displaced };
    }
    return REJECTED;
  }

  /**
   * Dequeues at `now`: sheds waiters over their allowance (only when `target` is set), then returns the next
   * waiter to serve — the oldest, or the newest while congested with `adaptiveLifo`.
   */
  pop(now: number): CoDelPopResult<T> {
    if (this.count === 0) {
      this.lastEmptyAt = now;
      return NOTHING;
    }
    const { target, interval, adaptiveLifo, prioritized } = this.options;
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
    if (this.count === 0) {
      this.lastEmptyAt = now;
      return shed === undefined ? NOTHING : { shed };
    }

    let chosen: RingDeque<T> | undefined;
    const newestFirst = adaptiveLifo && congested;
    for (let t = 0; t < tiers.length; t++) {
      const deque = tiers[t]!;
      if (deque.size === 0) continue;
      if (
        chosen === undefined ||
        (newestFirst ? deque.backSeq() > chosen.backSeq() : deque.frontSeq() < chosen.frontSeq())
      )
        chosen = deque;
    }
    const item = newestFirst ? chosen!.popBack() : chosen!.popFront();
    if (--this.count === 0) this.lastEmptyAt = now;
    return { item, shed: shed ?? NONE_SHED };
  }

  /** Removes a waiter (by identity), e.g. when its caller gave up. O(n). Returns whether it was queued. */
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
}
