import type {
  BreakerAdmission,
  BreakerOutcome,
  BreakerParams,
  BreakerPermit,
  BreakerRecordResult,
  BreakerSnapshot,
  CircuitBreakerStore,
  StateKey,
} from './ports';
import { CircuitStateMachine } from './circuit-state-machine';

const NEVER_SEEN: BreakerSnapshot = Object.freeze({
  state: 'closed',
  failureRatio: 0,
  calls: 0,
  generation: 0,
});

/**
 * The default {@link CircuitBreakerStore}: one {@link CircuitStateMachine} per key, synchronous, per process, time
 * only from the `now` argument (the machine's doc comment states the semantics).
 */
export class InMemoryCircuitBreakerStore implements CircuitBreakerStore {
  readonly #entries = new Map<string, CircuitStateMachine>();

  /** Number of keys held (for tests of bounded memory). */
  get size(): number {
    return this.#entries.size;
  }

  acquire(key: StateKey, params: BreakerParams, now: number): BreakerAdmission {
    let e = this.#entries.get(key.id);
    if (e === undefined) this.#entries.set(key.id, (e = new CircuitStateMachine()));
    return e.acquire(params, now);
  }

  record(
    key: StateKey,
    params: BreakerParams,
    permit: BreakerPermit,
    outcome: BreakerOutcome,
    now: number,
  ): BreakerRecordResult {
    const e = this.#entries.get(key.id);
    if (e === undefined) return { state: 'closed', transition: undefined };
    return e.record(params, permit, outcome, now);
  }

  inspect(key: StateKey, params: BreakerParams, now: number): BreakerSnapshot {
    return this.#entries.get(key.id)?.inspect(params, now) ?? NEVER_SEEN;
  }

  reset(key: StateKey, _now: number): void {
    this.#entries.get(key.id)?.reset();
  }

  evict(key: StateKey): void {
    this.#entries.delete(key.id);
  }
}
