/** The part of Node's `ServerResponse` a viewer writes to (both adapters hand one over). */
export interface SseSink {
  write(chunk: string): boolean;
  once(event: 'drain', listener: () => void): unknown;
  end(): unknown;
}

/** How many policy events wait for a slow viewer; beyond it they are dropped (the next snapshot has the state). */
export const MAX_QUEUED_EVENTS = 100;

/** One server-sent event frame. `data` is JSON, one line. */
export function sseFrame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * One viewer of the stream, back-pressure aware: while its socket's buffer is full (`write` returned false, no
 * `drain` yet), snapshots are coalesced — only the newest waits — and policy events queue up to
 * {@link MAX_QUEUED_EVENTS}, then are dropped and counted (the page is told in a `dropped` event). A slow client
 * therefore holds at most one snapshot and a bounded queue, however long it stalls.
 */
export class SseViewer {
  #blocked = false;
  #pendingSnapshot: string | undefined;
  #events: string[] = [];
  #dropped = 0;
  #closed = false;

  constructor(private readonly sink: SseSink) {}

  /** Snapshots replaced before this viewer could take them, and events dropped for it. */
  readonly stats = { coalesced: 0, dropped: 0 };

  get blocked(): boolean {
    return this.#blocked;
  }

  snapshot(frame: string): void {
    if (this.#closed) return;
    if (!this.#blocked) return this.#write(frame);
    if (this.#pendingSnapshot !== undefined) this.stats.coalesced++;
    this.#pendingSnapshot = frame;
  }

  event(frame: string): void {
    if (this.#closed) return;
    if (!this.#blocked) return this.#write(frame);
    if (this.#events.length < MAX_QUEUED_EVENTS) this.#events.push(frame);
    else {
      this.#dropped++;
      this.stats.dropped++;
    }
  }

  /** Ends the response (when the module is destroyed; after the client left it changes nothing). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.sink.end();
    this.#events = [];
    this.#pendingSnapshot = undefined;
  }

  #write(frame: string): void {
    if (this.sink.write(frame)) return;
    this.#blocked = true;
    this.sink.once('drain', () => this.#drain());
  }

  #drain(): void {
    this.#blocked = false;
    if (this.#closed) return;
    const events = this.#events;
    this.#events = [];
    const snapshot = this.#pendingSnapshot;
    this.#pendingSnapshot = undefined;
    const dropped = this.#dropped;
    this.#dropped = 0;
    // Events first (they happened before the newest snapshot), then the snapshot; stop again if the buffer fills.
    const frames = [...events, ...(dropped > 0 ? [sseFrame('dropped', { events: dropped })] : [])];
    if (snapshot !== undefined) frames.push(snapshot);
    for (const [i, frame] of frames.entries()) {
      if (this.#blocked) {
        // Blocked again mid-flush: requeue the rest, keeping the bounds.
        for (const rest of frames.slice(i))
          if (rest === snapshot) this.#pendingSnapshot = rest;
          else if (this.#events.length < MAX_QUEUED_EVENTS) this.#events.push(rest);
          else this.#dropped++;
        return;
      }
      this.#write(frame);
    }
  }
}
