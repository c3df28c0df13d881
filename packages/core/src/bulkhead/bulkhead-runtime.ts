import { CoDelQueue, Criticality, isCriticality } from '@ballast/codel';
import type { LatencyDigestStore, StateKey } from '../stores/ports';
import type {
  ResolvedAdaptiveBulkheadOptions,
  ResolvedBulkheadOptions,
  ResolvedGradientBulkheadOptions,
  ResolvedQueueOptions,
} from '../strategies/types';
import type { Clock } from '../time/clock';
import {
  emitLimit,
  emitShed,
  emitStoreError,
  type Admission,
  type BulkheadHooks,
  type BulkheadOutcome,
  type ParkedAdmission,
} from './admission';
import {
  bulkheadFull,
  bulkheadQueueTimeout,
  bulkheadShed,
  deadlineExceeded,
  errorOrigin,
  type ErrorOrigin,
} from './bulkhead-errors';
import {
  AimdLimitController,
  FixedLimitController,
  GradientLimitController,
  type ControllerDeps,
  type LimitController,
} from './limit-controllers';
import { GRANTED, QUEUED, SETTLED, Waiter } from './waiter';

/**
 * The one admission machinery behind all three bulkhead kinds (SPEC §4 "Bulkheads"): a counting semaphore whose
 * limit comes from a {@link LimitController}, with a `CoDelQueue` of parked waiters (Fail at Scale: bounded,
 * time-aware queues; CoDel sojourn shedding decided at dequeue; adaptive LIFO; criticality tiers).
 *
 * No timers but `maxWait`'s: shedding is decided when a slot frees up (`pop`), deadlines are checked when a waiter
 * is woken, and the executor's own deadline/abort handling calls `cancel()`. A `maxWait` bound must fail a waiter
 * even when no slot ever frees, so it arms one clock timer per parked waiter (parking is the slow path already),
 * disarmed on every way out of the queue: no timer outlives its wait. Invariant after every public call:
 * `waiting > 0 ⇒ inUse ≥ limit` — so a newcomer can never overtake a parked waiter, and no slot idles while
 * someone waits.
 */
export interface BulkheadRuntime extends RunningCalls {
  /** Integer current limit. */
  readonly limit: number;
  /** Slots held. May exceed `limit` after a shrink: in-flight work is never evicted. */
  readonly inUse: number;
  /** Parked waiters. */
  readonly waiting: number;
  /** Releases that found no slot held and were ignored (a double release never frees a slot). */
  readonly overReleases: number;
  /**
   * Synchronous fast path (`true`, nothing allocated) when a slot is free and nobody waits; a `ResilienceError`
   * value when rejected; otherwise a {@link ParkedAdmission}. `deadline` is absolute, on the runtime's clock.
   * `criticality` is 0 (BEST_EFFORT) … 3 (CRITICAL), anything else counts as NORMAL; it matters only with
   * `prioritized`.
   */
  acquire(criticality: number, deadline: number | undefined): Admission | ParkedAdmission;
  /**
   * Exactly once per admission. `latency` = ms from admission to completion on the runtime's clock. A release
   * when no slot is held is ignored and counted in `overReleases`.
   */
  release(latency: number, outcome: BulkheadOutcome): void;
  /**
   * Retune (SPEC §6): moves the slots this bulkhead holds and its parked waiters, in arrival order, to `next`, the
   * key's bulkhead under the new policy, so the limit keeps counting calls admitted before the retune and a newcomer
   * never overtakes a parked waiter. From then on this one only forwards: releases and cancels reach `next`.
   */
  handOver(next: BulkheadRuntime): void;
  /**
   * Retune to a policy without a bulkhead: parked waiters go now, in arrival order (one whose deadline has passed
   * fails, as at any wake), and from then on this bulkhead limits nothing. The calls it counts (and any that still
   * reach it, having captured the old policy) are handed to `into` as running, so a bulkhead a later retune adds
   * counts them too.
   */
  dissolve(into: RunningCalls): void;
}

/**
 * Retune bookkeeping for calls that run without a slot of the current policy's bulkhead (SPEC §6: a retune that adds
 * a bulkhead counts the calls already running). A key without a bulkhead, and a bulkhead, both take such calls:
 * `runningAdded(n)` when they start counting, `runningEnded()` once per call when it ends.
 */
export interface RunningCalls {
  runningAdded(n: number): void;
  runningEnded(): void;
}

export type BulkheadStrategyConfig =
  | { readonly type: 'bulkhead'; readonly options: ResolvedBulkheadOptions }
  | { readonly type: 'adaptiveBulkhead'; readonly options: ResolvedAdaptiveBulkheadOptions }
  | { readonly type: 'gradientBulkhead'; readonly options: ResolvedGradientBulkheadOptions };

export interface BulkheadRuntimeDeps {
  readonly clock: Clock;
  readonly key: StateKey;
  readonly digest: LatencyDigestStore;
  readonly policy: string;
  readonly route: string | undefined;
  readonly hooks: BulkheadHooks;
}

/** Builds the runtime of one `(policy, route)` key for a bulkhead strategy. */
export function createBulkheadRuntime(
  strategy: BulkheadStrategyConfig,
  deps: BulkheadRuntimeDeps,
): BulkheadRuntime {
  return new QueuedBulkhead(strategy.options, deps, (controllerDeps) => {
    switch (strategy.type) {
      case 'bulkhead':
        return new FixedLimitController(strategy.options);
      case 'adaptiveBulkhead':
        return new AimdLimitController(strategy.options, controllerDeps);
      case 'gradientBulkhead':
        return new GradientLimitController(strategy.options, controllerDeps);
    }
  });
}

/** @internal Exported for tests that drive the limit directly; production code uses {@link createBulkheadRuntime}. */
export class QueuedBulkhead implements BulkheadRuntime {
  readonly #clock: Clock;
  readonly #hooks: BulkheadHooks;
  readonly #origin: ErrorOrigin;
  #queue: CoDelQueue<Waiter> | undefined;
  readonly #maxQueue: number;
  readonly #prioritized: boolean;
  readonly #maxWait: number | undefined;
  readonly #controller: LimitController;
  #limit: number;
  #inUse = 0;
  #overReleases = 0;
  /** Set by {@link handOver}: the bulkhead that now owns this one's slots and waiters. */
  #successor: QueuedBulkhead | undefined = undefined;
  /** Set by {@link dissolve}: the policy no longer has a bulkhead, and these calls now count there. */
  #dissolvedInto: RunningCalls | undefined = undefined;

  constructor(
    queue: ResolvedQueueOptions,
    deps: BulkheadRuntimeDeps,
    makeController: (deps: ControllerDeps) => LimitController,
  ) {
    this.#clock = deps.clock;
    this.#hooks = deps.hooks;
    this.#origin = errorOrigin(deps.policy, deps.route);
    this.#maxQueue = queue.maxQueue;
    this.#prioritized = queue.prioritized;
    this.#maxWait = queue.maxWait;
    this.#queue =
      queue.maxQueue < 1
        ? undefined
        : new CoDelQueue<Waiter>({
            maxSize: queue.maxQueue,
            ...(queue.queueTarget === undefined ? {} : { target: queue.queueTarget }),
            interval: queue.queueInterval,
            adaptiveLifo: queue.queueAdaptiveLifo,
            prioritized: queue.prioritized,
          });
    this.#controller = makeController({
      clock: deps.clock,
      key: deps.key,
      digest: deps.digest,
      onAsyncChange: () => {
        this.#syncLimit();
        this.#drain();
      },
      onStoreError: (error) => emitStoreError(this.#hooks, error),
    });
    this.#limit = this.#controller.limit;
  }

  get limit(): number {
    return this.#limit;
  }
  get inUse(): number {
    return this.#inUse;
  }
  get waiting(): number {
    return this.#queue === undefined ? 0 : this.#queue.size;
  }
  get overReleases(): number {
    return this.#overReleases;
  }

  acquire(criticality: number, deadline: number | undefined): Admission | ParkedAdmission {
    // A call that captured its key before a retune but reaches the bulkhead after it.
    if (this.#successor !== undefined) return this.#successor.acquire(criticality, deadline);
    if (this.#dissolvedInto !== undefined) {
      this.#inUse++;
      this.#dissolvedInto.runningAdded(1);
      return true;
    }
    const queue = this.#queue;
    if (queue === undefined) {
      if (this.#inUse < this.#limit) {
        this.#inUse++;
        return true;
      }
      return bulkheadFull(this.#origin, this.#limit, this.#inUse, 0);
    }
    const size = queue.size;
    if (size === 0 && this.#inUse < this.#limit) {
      this.#inUse++;
      return true;
    }
    // Without priorities a full queue can only refuse: answer before allocating a waiter.
    if (size >= this.#maxQueue && !this.#prioritized) {
      return bulkheadFull(this.#origin, this.#limit, this.#inUse, size);
    }
    const now = this.#clock.now();
    // Already past its deadline: it would only be failed at wake, after taking a queue place (or displacing a
    // live lower-tier waiter) in the meantime.
    if (deadline !== undefined && now >= deadline) return deadlineExceeded(this.#origin, deadline, now);
    // Out-of-range levels count as NORMAL rather than throwing out of the admission path.
    const level = isCriticality(criticality) ? criticality : Criticality.NORMAL;
    const waiter = new Waiter(this, level, deadline, now);
    const pushed = queue.push(waiter, now, level);
    if (!pushed.ok) return bulkheadFull(this.#origin, this.#limit, this.#inUse, queue.size);
    if (pushed.displaced !== undefined) this.#shed(pushed.displaced, now);
    if (this.#maxWait !== undefined) waiter.arm(this.#clock, this.#maxWait);
    return waiter;
  }

  release(latency: number, outcome: BulkheadOutcome): void {
    // The slot moved with the retune. No sample: the new limit learns only from calls it admitted itself.
    if (this.#successor !== undefined) return this.#successor.release(latency, 'neutral');
    const inflight = this.#inUse;
    if (inflight <= 0) {
      this.#overReleases++;
      return;
    }
    this.#inUse = inflight - 1;
    if (this.#dissolvedInto !== undefined) return this.#dissolvedInto.runningEnded();
    this.#controller.sample(latency, outcome, inflight);
    this.#syncLimit();
    this.#drain();
  }

  handOver(next: BulkheadRuntime): void {
    if (!(next instanceof QueuedBulkhead) || next === this || this.#successor !== undefined) return;
    this.#successor = next;
    const carried: Waiter[] = [];
    this.#queue?.forEach((w) => carried.push(w));
    // Arrival order across tiers (sort is stable): the new queue may have other tiers, or none.
    carried.sort((a, b) => a.enqueuedAt - b.enqueuedAt);
    this.#queue = undefined;
    const held = this.#inUse;
    this.#inUse = 0;
    next.#adopt(held, carried);
  }

  dissolve(into: RunningCalls): void {
    if (this.#successor !== undefined) return this.#successor.dissolve(into);
    if (this.#dissolvedInto !== undefined) return;
    const carried: Waiter[] = [];
    this.#queue?.forEach((w) => carried.push(w));
    carried.sort((a, b) => a.enqueuedAt - b.enqueuedAt);
    this.#queue = undefined;
    const now = this.#clock.now();
    for (const w of carried) this.#wake(w, now);
    this.#dissolvedInto = into;
    if (this.#inUse > 0) into.runningAdded(this.#inUse);
  }

  runningAdded(n: number): void {
    if (this.#successor !== undefined) return this.#successor.runningAdded(n);
    this.#inUse += n;
    this.#dissolvedInto?.runningAdded(n);
  }

  /** A carried call ended: its slot comes back with no latency sample (the limit learns only from its own calls). */
  runningEnded(): void {
    this.release(0, 'neutral');
  }

  /** The receiving side of {@link handOver}: count the held slots, then admit or queue each waiter as it arrived. */
  #adopt(held: number, carried: readonly Waiter[]): void {
    this.#inUse += held;
    const now = this.#clock.now();
    for (const w of carried) {
      w.owner = this;
      const queue = this.#queue;
      if ((queue === undefined || queue.size === 0) && this.#inUse < this.#limit) {
        this.#wake(w, now);
        continue;
      }
      // Queued at its original arrival time, so its sojourn keeps counting from when it really started waiting.
      const pushed = queue === undefined ? undefined : queue.push(w, w.enqueuedAt, w.criticality);
      if (pushed === undefined || !pushed.ok) {
        w.finish(
          SETTLED,
          bulkheadFull(this.#origin, this.#limit, this.#inUse, queue === undefined ? 0 : queue.size),
        );
        continue;
      }
      if (pushed.displaced !== undefined) this.#shed(pushed.displaced, now);
      // This bulkhead's `maxWait` now bounds it, counted from when it really started waiting.
      if (this.#maxWait === undefined) w.disarm();
      else w.arm(this.#clock, Math.max(0, w.enqueuedAt + this.#maxWait - now));
    }
  }

  /** @internal Called by {@link Waiter.cancel}. */
  cancelWaiter(waiter: Waiter): void {
    if (waiter.state === QUEUED) {
      waiter.disarm();
      waiter.state = SETTLED;
      this.#queue?.remove(waiter);
    } else if (waiter.state === GRANTED) {
      // The grant and the abort raced within one tick: the caller never saw `true`, so give the slot back
      // (no latency sample) and let the next waiter have it.
      waiter.state = SETTLED;
      this.#returnSlot();
    }
  }

  /** @internal Called by a waiter's `maxWait` timer: still parked, it leaves the queue with a timeout. */
  expireWaiter(waiter: Waiter): void {
    if (waiter.state !== QUEUED) return;
    this.#queue?.remove(waiter);
    const sojourn = this.#clock.now() - waiter.enqueuedAt;
    waiter.finish(SETTLED, bulkheadQueueTimeout(this.#origin, this.#maxWait ?? sojourn, sojourn));
  }

  #returnSlot(): void {
    if (this.#successor !== undefined) return this.#successor.#returnSlot();
    this.#inUse--;
    if (this.#dissolvedInto !== undefined) return this.#dissolvedInto.runningEnded();
    this.#drain();
  }

  /** Reads the controller's limit; reports a change. Never evicts: a shrink only stops new admissions. */
  #syncLimit(): void {
    const next = this.#controller.limit;
    if (next === this.#limit) return;
    this.#limit = next;
    emitLimit(this.#hooks, next);
  }

  /**
   * Hands free slots to waiters in the order the queue serves them. CoDel sheds are decided by this very pop
   * (Fail at Scale: "decided at dequeue"), so shed waiters are rejected at the time of the pop that shed them. A
   * waiter found past its deadline is failed and its slot goes to the next one.
   *
   * A free slot that finds nobody waiting is capacity going idle: the queue is told (`idle(now)`), which is what
   * "the queue was empty" means to CoDel's congestion test. A slot that frees while waiters are queued is not idle,
   * even if this pop sheds all of them: the queue then stays congested until a later release finds it empty.
   */
  #drain(): void {
    const queue = this.#queue;
    if (queue === undefined || this.#inUse >= this.#limit) return;
    const now = this.#clock.now();
    if (queue.size === 0) {
      queue.idle(now);
      return;
    }
    while (this.#inUse < this.#limit && queue.size > 0) {
      const { item, shed } = queue.pop(now);
      for (let i = 0; i < shed.length; i++) this.#shed(shed[i]!, now);
      if (item === undefined) {
        if (shed.length === 0) break; // defensive: a queue that yields nothing must not spin us
        continue;
      }
      this.#wake(item, now);
    }
  }

  /** Hands a free slot to `waiter`, or fails it if its deadline has passed (the slot then stays free). */
  #wake(waiter: Waiter, now: number): void {
    if (waiter.deadline !== undefined && now >= waiter.deadline) {
      waiter.finish(SETTLED, deadlineExceeded(this.#origin, waiter.deadline, now));
      return;
    }
    this.#inUse++;
    waiter.finish(GRANTED, true);
  }

  #shed(waiter: Waiter, now: number): void {
    const sojourn = now - waiter.enqueuedAt;
    waiter.finish(SETTLED, bulkheadShed(this.#origin, waiter.criticality, sojourn));
    emitShed(this.#hooks, waiter.criticality, sojourn);
  }
}
