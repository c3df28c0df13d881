import type { Resilience, ResilienceEvent, TimerHandle } from '@ballast/core';
import { SnapshotAggregator } from './snapshot-aggregator';
import { SseViewer, sseFrame } from './sse-viewer';

/** Policy events sent to viewers as they happen: the rare, state-changing ones (calls arrive in the snapshot). */
export const LIVE_EVENTS: ReadonlySet<ResilienceEvent['type']> = new Set([
  'breaker_state',
  'bulkhead_limit',
  'store_degraded',
]);

/**
 * The stream's one producer. Every viewer shares one {@link SnapshotAggregator} and one snapshot computation per
 * interval: the `Resilience` is subscribed and the timer armed only while someone watches (the first viewer starts
 * them, the last one stops them), the timer runs on the `Resilience`'s clock and is unref'd, so it never keeps a
 * process alive, and {@link close} (module destroy) ends every stream.
 */
export class DashboardHub {
  readonly #viewers = new Set<SseViewer>();
  readonly #aggregator: SnapshotAggregator;
  #unsubscribe: (() => void) | undefined;
  #timer: TimerHandle | undefined;
  #last: string | undefined;
  #closed = false;
  /** Snapshot computations so far (one per interval however many viewers). */
  computations = 0;

  constructor(
    private readonly resilience: Resilience,
    readonly interval: number,
  ) {
    this.#aggregator = new SnapshotAggregator(resilience.clock.now());
  }

  get viewers(): number {
    return this.#viewers.size;
  }

  /** Adds a viewer; the returned function removes it (call it when its connection closes). */
  attach(viewer: SseViewer): () => void {
    if (this.#closed) {
      viewer.close();
      return () => undefined;
    }
    this.#viewers.add(viewer);
    if (this.#viewers.size === 1) this.#start();
    else if (this.#last !== undefined) viewer.snapshot(this.#last);
    let attached = true;
    return () => {
      if (!attached) return;
      attached = false;
      viewer.close();
      this.#viewers.delete(viewer);
      if (this.#viewers.size === 0) this.#stop();
    };
  }

  /** Ends every stream and refuses new ones (the module is being destroyed). */
  close(): void {
    this.#closed = true;
    for (const v of this.#viewers) v.close();
    this.#viewers.clear();
    this.#stop();
  }

  #start(): void {
    const clock = this.resilience.clock;
    this.#aggregator.restart(clock.now());
    this.#unsubscribe = this.resilience.on((event) => {
      this.#aggregator.record(event, clock.now());
      if (!LIVE_EVENTS.has(event.type)) return;
      const frame = sseFrame('policy', eventData(event));
      for (const v of this.#viewers) v.event(frame);
    });
    // The first snapshot at once, so a new page shows the state without waiting an interval.
    void this.#tick();
  }

  #stop(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    if (this.#timer !== undefined) this.resilience.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#last = undefined;
  }

  async #tick(): Promise<void> {
    this.#timer = undefined;
    const unsubscribe = this.#unsubscribe;
    let frame: string;
    try {
      this.computations++;
      const admin = this.resilience.admin;
      const [policies, state] = await Promise.all([admin.policies(), admin.inspect()]);
      const entries = state.map((s) => ({ ...s, route: s.route ?? null }));
      frame = sseFrame('snapshot', this.#aggregator.take(policies, entries, this.resilience.clock.now()));
    } catch (error) {
      frame = sseFrame('problem', { message: `The snapshot failed: ${String(error)}` });
    }
    // Stopped (or stopped and restarted) while the state was read: that run's timer is the live one.
    if (this.#unsubscribe !== unsubscribe || unsubscribe === undefined) return;
    this.#last = frame;
    for (const v of this.#viewers) v.snapshot(frame);
    const timer = this.resilience.clock.setTimeout(() => void this.#tick(), this.interval);
    (timer as { unref?: () => void } | undefined)?.unref?.();
    this.#timer = timer;
  }
}

/** An event as JSON carries it: errors become their message (an Error stringifies to `{}`). */
function eventData(event: ResilienceEvent): Record<string, unknown> {
  const data: Record<string, unknown> = { ...event, route: event.route ?? null };
  if ('error' in event)
    data['error'] = event.error instanceof Error ? event.error.message : String(event.error);
  return data;
}
