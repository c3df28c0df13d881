// The live stream, read with fetch (EventSource cannot send a bearer header), reconnecting when it drops.
import { apiBase, authHeaders } from './api';

export type StreamStatus = 'no token' | 'connecting' | 'live' | 'reconnecting' | 'refused';

export interface StreamHandlers {
  status(status: StreamStatus, detail?: string): void;
  event(type: string, data: unknown): void;
}

/** No byte for this long (several snapshot intervals) means a dead connection: drop it and reconnect. */
const SILENCE_MS = 10_000;
const MAX_BACKOFF_MS = 8_000;

export class LiveStream {
  #abort: AbortController | undefined;

  constructor(private readonly handlers: StreamHandlers) {}

  /** (Re)starts with the current token; stops any earlier connection. */
  start(): void {
    this.stop();
    const abort = new AbortController();
    this.#abort = abort;
    void this.#run(abort.signal);
  }

  stop(): void {
    this.#abort?.abort();
    this.#abort = undefined;
  }

  async #run(signal: AbortSignal): Promise<void> {
    let backoff = 1000;
    while (!signal.aborted) {
      this.handlers.status(backoff === 1000 ? 'connecting' : 'reconnecting');
      const attempt = new AbortController();
      const onAbort = (): void => attempt.abort();
      signal.addEventListener('abort', onAbort);
      let watchdog: ReturnType<typeof setTimeout> | undefined;
      const arm = (): void => {
        clearTimeout(watchdog);
        watchdog = setTimeout(() => attempt.abort(), SILENCE_MS);
      };
      try {
        arm();
        const res = await fetch(`${apiBase()}/stream`, {
          headers: { ...authHeaders(), Accept: 'text/event-stream' },
          cache: 'no-store',
          signal: attempt.signal,
        });
        if (res.status === 401 || res.status === 403) {
          this.handlers.status('refused', `the server refused the token (${res.status})`);
          return;
        }
        if (!res.ok || res.body === null) throw new Error(`HTTP ${res.status}`);
        this.handlers.status('live');
        backoff = 1000;
        await this.#read(res.body, arm);
      } catch {
        // dropped, refused by the network, or silent too long: reconnect below
      } finally {
        clearTimeout(watchdog);
        signal.removeEventListener('abort', onAbort);
        attempt.abort();
      }
      if (signal.aborted) return;
      this.handlers.status('reconnecting');
      await new Promise((r) => setTimeout(r, backoff));
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    }
  }

  async #read(body: ReadableStream<Uint8Array>, alive: () => void): Promise<void> {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      alive();
      buffer += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let type = 'message';
        const data: string[] = [];
        for (const line of frame.split('\n')) {
          if (line.startsWith('event: ')) type = line.slice(7);
          else if (line.startsWith('data: ')) data.push(line.slice(6));
        }
        if (data.length === 0) continue; // a comment or a retry hint
        try {
          this.handlers.event(type, JSON.parse(data.join('\n')));
        } catch {
          // one bad frame does not end the stream
        }
      }
    }
  }
}
