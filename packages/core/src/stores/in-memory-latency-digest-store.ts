import { WindowedP2Quantile } from '@ballast/p2-quantile';
import type { DigestParams, LatencyDigestStore, StateKey } from './ports';

/** One estimator per quantile of a key (a hedge and an adaptive bulkhead may watch different quantiles). */
interface DigestEntry {
  readonly quantiles: number[];
  readonly estimators: WindowedP2Quantile[];
}

/**
 * The default {@link LatencyDigestStore}: a {@link WindowedP2Quantile} per (key, quantile) with `window` samples per
 * epoch (SPEC §3), so old latency ages out and memory is O(1) per estimator. `reset` opens a fresh epoch for every
 * quantile of the key (the estimate is undefined until it warms up again). Time is not used: epochs are counted in
 * samples.
 */
export class InMemoryLatencyDigestStore implements LatencyDigestStore {
  readonly #entries = new Map<string, DigestEntry>();

  /** Number of keys held (for tests of bounded memory). */
  get size(): number {
    return this.#entries.size;
  }

  observe(key: StateKey, params: DigestParams, latency: number, _now: number): number | undefined {
    const estimator = this.#estimator(key, params);
    estimator.add(latency);
    return estimator.value();
  }

  read(key: StateKey, params: DigestParams, _now: number): number | undefined {
    const e = this.#entries.get(key.id);
    if (e === undefined) return undefined;
    const i = e.quantiles.indexOf(params.quantile);
    const estimator = i < 0 ? undefined : e.estimators[i];
    return estimator !== undefined && estimator.options.window === params.window
      ? estimator.value()
      : undefined;
  }

  reset(key: StateKey, _now: number): void {
    const e = this.#entries.get(key.id);
    if (e !== undefined) for (const estimator of e.estimators) estimator.reset();
  }

  evict(key: StateKey): void {
    this.#entries.delete(key.id);
  }

  #estimator(key: StateKey, params: DigestParams): WindowedP2Quantile {
    let e = this.#entries.get(key.id);
    if (e === undefined) {
      e = { quantiles: [], estimators: [] };
      this.#entries.set(key.id, e);
    }
    const i = e.quantiles.indexOf(params.quantile);
    const found = i < 0 ? undefined : e.estimators[i];
    if (found !== undefined && found.options.window === params.window) return found;
    // New quantile, or a retuned window: start a fresh estimator (an epoch of another length is not comparable).
    const estimator = new WindowedP2Quantile(params.quantile, { window: params.window });
    if (i < 0) {
      e.quantiles.push(params.quantile);
      e.estimators.push(estimator);
    } else {
      e.estimators[i] = estimator;
    }
    return estimator;
  }
}
