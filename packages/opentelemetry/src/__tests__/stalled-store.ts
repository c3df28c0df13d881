import {
  InMemoryCircuitBreakerStore,
  type BreakerOutcome,
  type BreakerParams,
  type BreakerPermit,
  type CircuitBreakerStore,
  type Clock,
  type MaybePromise,
  type StateKey,
} from '@ballast/core';

/**
 * A `CircuitBreakerStore` (the core store port, not a Redis mock) in front of a backend that can hang. While
 * `stalled`, every operation is answered only after `commandTimeout` ms of the given clock, and then with an error:
 * what a remote store with a client-side command timeout does on a server that stopped answering. Otherwise it
 * answers from an in-memory store, as a healthy shared store would.
 *
 * On a FakeClock nobody advances during a metrics collection, a stalled read simply never comes back in time.
 */
export class StalledCircuitBreakerStore implements CircuitBreakerStore {
  stalled = false;
  /** Operations waiting for their (late) answer. */
  pending = 0;
  readonly #healthy = new InMemoryCircuitBreakerStore();

  constructor(
    private readonly clock: Clock,
    private readonly commandTimeout = 250,
  ) {}

  acquire(key: StateKey, params: BreakerParams, now: number) {
    return this.#answer(() => this.#healthy.acquire(key, params, now));
  }

  record(key: StateKey, params: BreakerParams, permit: BreakerPermit, outcome: BreakerOutcome, now: number) {
    return this.#answer(() => this.#healthy.record(key, params, permit, outcome, now));
  }

  inspect(key: StateKey, params: BreakerParams, now: number) {
    return this.#answer(() => this.#healthy.inspect(key, params, now));
  }

  reset(key: StateKey, now: number) {
    return this.#answer(() => this.#healthy.reset(key, now));
  }

  evict(key: StateKey): void {
    this.#healthy.evict(key);
  }

  #answer<T>(op: () => MaybePromise<T>): MaybePromise<T> {
    if (!this.stalled) return op();
    this.pending++;
    return new Promise<T>((_, reject) => {
      this.clock.setTimeout(() => {
        this.pending--;
        reject(new Error(`store command timed out after ${this.commandTimeout} ms`));
      }, this.commandTimeout);
    });
  }
}
