import { BadGatewayException, Inject, Injectable } from '@nestjs/common';
import type { Clock, Random } from '@ballast/core';
import { DEMO_CLOCK, DEMO_RANDOM } from '../demo-config';

/** The levers of the simulated backend, all adjustable over HTTP (`PUT /backend`). */
export interface BackendKnobs {
  /** Probability (0–1) that a request fails with a 502. */
  failureRate: number;
  /** Normal latency of a stock lookup, ms. */
  latencyMs: number;
  /** Probability (0–1) that a lookup hits the slow path (a GC pause, a cold cache): the tail hedging fixes. */
  slowRate: number;
  /** Latency of the slow path, ms. */
  slowMs: number;
  /** Concurrent requests the backend handles well; beyond that it is overloaded: 4× slower, failing half the time. */
  capacity: number;
  /** How long a reservation (checkout) holds the backend, ms. */
  reserveMs: number;
}

export const DEFAULT_KNOBS: Readonly<BackendKnobs> = Object.freeze({
  failureRate: 0,
  latencyMs: 20,
  slowRate: 0,
  slowMs: 1500,
  capacity: 8,
  reserveMs: 300,
});

export interface BackendStats {
  inFlight: number;
  served: number;
  failed: number;
  cancelled: number;
}

/**
 * An in-process stand-in for a flaky, slow, overloadable inventory service. It honours the `AbortSignal` it is
 * given (so a timeout, a lost hedge or a client disconnect really stops the work: watch `cancelled` grow) and runs
 * on the injected clock and random source, so the demo's own tests are deterministic.
 */
@Injectable()
export class InventoryBackend {
  knobs: BackendKnobs = { ...DEFAULT_KNOBS };
  readonly stats: BackendStats = { inFlight: 0, served: 0, failed: 0, cancelled: 0 };
  readonly #stock = new Map<string, number>();

  constructor(
    @Inject(DEMO_CLOCK) private readonly clock: Clock,
    @Inject(DEMO_RANDOM) private readonly random: Random,
  ) {}

  /** Applies a partial update; returns the violations instead when any value is out of range. */
  configure(update: Record<string, unknown>): string[] {
    const next = { ...this.knobs };
    const problems: string[] = [];
    for (const [key, value] of Object.entries(update)) {
      if (!(key in DEFAULT_KNOBS)) {
        problems.push(`${key}: unknown knob (known: ${Object.keys(DEFAULT_KNOBS).join(', ')})`);
        continue;
      }
      const isRate = key === 'failureRate' || key === 'slowRate';
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || (isRate && value > 1)) {
        problems.push(
          `${key}: must be a number ${isRate ? 'in [0, 1]' : '≥ 0'}, got ${JSON.stringify(value)}`,
        );
        continue;
      }
      next[key as keyof BackendKnobs] = value;
    }
    if (problems.length === 0) this.knobs = next;
    return problems;
  }

  reset(): void {
    this.knobs = { ...DEFAULT_KNOBS };
    Object.assign(this.stats, { served: 0, failed: 0, cancelled: 0 });
    this.#stock.clear();
  }

  /** Units in stock for `sku`. */
  async stock(sku: string, signal?: AbortSignal): Promise<number> {
    const slow = this.random() < this.knobs.slowRate;
    await this.#work(slow ? this.knobs.slowMs : this.knobs.latencyMs, signal);
    return this.#stockOf(sku);
  }

  /** Reserves units; returns a reservation id. */
  async reserve(sku: string, quantity: number, signal?: AbortSignal): Promise<string> {
    await this.#work(this.knobs.reserveMs, signal);
    this.#stock.set(sku, Math.max(0, this.#stockOf(sku) - quantity));
    return `res-${sku}-${this.stats.served}`;
  }

  #stockOf(sku: string): number {
    let units = this.#stock.get(sku);
    if (units === undefined) {
      units = [...sku].reduce((n, c) => (n * 31 + c.charCodeAt(0)) % 97, 7) + 3;
      this.#stock.set(sku, units);
    }
    return units;
  }

  async #work(ms: number, signal: AbortSignal | undefined): Promise<void> {
    this.stats.inFlight++;
    try {
      const overloaded = this.stats.inFlight > this.knobs.capacity;
      await this.#sleep(overloaded ? ms * 4 : ms, signal);
      const failureRate = overloaded ? Math.max(this.knobs.failureRate, 0.5) : this.knobs.failureRate;
      if (this.random() < failureRate) {
        this.stats.failed++;
        throw new BadGatewayException(
          overloaded ? 'Inventory backend overloaded' : 'Inventory backend error',
        );
      }
      this.stats.served++;
    } catch (error) {
      if (signal?.aborted === true) this.stats.cancelled++;
      throw error;
    } finally {
      this.stats.inFlight--;
    }
  }

  #sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
    if (signal?.aborted === true) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        this.clock.clearTimeout(timer);
        reject(signal!.reason);
      };
      const timer = this.clock.setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
