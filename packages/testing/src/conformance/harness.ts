import type { ConformanceKey } from './store-shapes';

/**
 * What a conformance suite needs from the code under test. The suite passes `now` to every store call, so a store
 * that takes time from its argument (in-memory; Redis with `time: 'caller'`) runs every rule deterministically.
 */
export interface StoreHarness<S> {
  readonly store: S;
  /** The time to pass as `now`. Default: a virtual clock owned by the suite (starting at `start`). */
  readonly now?: () => number;
  /** Moves `now` forward; required with `now` (e.g. a FakeClock's `advance`). */
  readonly advance?: (ms: number) => void | Promise<void>;
  /** Runs after each test: delete the keys the test wrote, close what setup opened. */
  readonly teardown?: () => void | Promise<void>;
}

/** Called before each test; may be async (open a client, pick a unique key prefix). */
export type StoreSetup<S> = () => StoreHarness<S> | Promise<StoreHarness<S>>;

export interface ConformanceOptions {
  /** Jest timeout per test in ms (remote stores need more than the default). */
  readonly timeout?: number;
  /** Start of the suite's virtual clock (default 1000). */
  readonly start?: number;
  /** Concurrent calls in the stampede tests (default 1000). */
  readonly concurrency?: number;
}

/** One test's view of the harness: the store, its clock, and fresh keys. */
export class TestBench<S> {
  #virtual: number;
  #keys = 0;
  readonly #token = Math.random().toString(36).slice(2, 8);

  constructor(
    readonly harness: StoreHarness<S>,
    start: number,
  ) {
    if (harness.now !== undefined && harness.advance === undefined)
      throw new Error('conformance: a harness with `now` must also provide `advance`');
    this.#virtual = start;
  }

  get store(): S {
    return this.harness.store;
  }

  now(): number {
    return this.harness.now === undefined ? this.#virtual : this.harness.now();
  }

  async advance(ms: number): Promise<void> {
    if (this.harness.advance === undefined) this.#virtual += ms;
    else await this.harness.advance(ms);
  }

  /** Advances to the next multiple of `step` (or stays when already on one). */
  async alignTo(step: number): Promise<void> {
    const now = this.now();
    const next = Math.ceil(now / step) * step;
    if (next > now) await this.advance(next - now);
  }

  /** A key no other test (or run) uses; the same encoding as core's `stateKey`. */
  key(route: string | undefined = 'route'): ConformanceKey {
    return this.keyOf(`conformance-${this.#token}-${++this.#keys}`, route);
  }

  /** A key of `policy` (one {@link key} made) for another route: keys sharing a policy must stay independent. */
  keyOf(policy: string, route: string | undefined): ConformanceKey {
    const id =
      route === undefined
        ? encodeURIComponent(policy)
        : `${encodeURIComponent(policy)}|${encodeURIComponent(route)}`;
    return Object.freeze({ policy, route, id });
  }
}

/** Registers beforeEach/afterEach that build a {@link TestBench} per test and tear it down. */
export function useBench<S>(setup: StoreSetup<S>, options: ConformanceOptions): () => TestBench<S> {
  let bench: TestBench<S> | undefined;
  beforeEach(async () => {
    bench = new TestBench(await setup(), options.start ?? 1000);
  });
  afterEach(async () => {
    const b = bench;
    bench = undefined;
    await b?.harness.teardown?.();
  });
  return () => {
    if (bench === undefined) throw new Error('conformance: no bench outside a test');
    return bench;
  };
}
