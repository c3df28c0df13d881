/**
 * One `abort` listener per caller signal, however many calls share it. A long-lived signal (a request's, a
 * server's shutdown signal) is often passed to many concurrent calls; one listener per call would trip Node's
 * `MaxListenersExceededWarning` past 10 (opossum PR #70, PR #443) and costs an `addEventListener` per call. Here the
 * first call on a signal attaches the listener, the last one to finish detaches it — unless the signal was
 * {@link keepSignalWatched kept watched}.
 */
export interface SignalWatcher {
  callerAborted(reason: unknown): void;
  /** Links of the signal's list of running calls (intrusive: no Set, no hashing, nothing allocated per call). */
  watchPrev: SignalWatcher | undefined;
  watchNext: SignalWatcher | undefined;
}

interface Watch {
  head: SignalWatcher | undefined;
  readonly onAbort: () => void;
  /** Kept for the signal's life: the listener stays while no call runs (see keepSignalWatched). */
  kept: boolean;
}

const watches = new WeakMap<AbortSignal, Watch>();

function watchOf(signal: AbortSignal): Watch {
  let w = watches.get(signal);
  if (w === undefined) {
    const watch: Watch = {
      head: undefined,
      onAbort: () => {
        watches.delete(signal);
        // A copy first: cancelling aborts ctx signals, whose listeners (user code) may start or end other calls.
        const calls: SignalWatcher[] = [];
        for (let c = watch.head; c !== undefined; c = c.watchNext) calls.push(c);
        for (const c of calls) c.callerAborted(signal.reason);
      },
      kept: false,
    };
    w = watch;
    watches.set(signal, w);
    signal.addEventListener('abort', w.onAbort, { once: true });
  }
  return w;
}

/** Cancels `call` with `signal.reason` when the signal aborts (until {@link unwatchSignal}). */
export function watchSignal(signal: AbortSignal, call: SignalWatcher): void {
  const w = watchOf(signal);
  call.watchPrev = undefined;
  call.watchNext = w.head;
  if (w.head !== undefined) w.head.watchPrev = call;
  w.head = call;
}

export function unwatchSignal(signal: AbortSignal, call: SignalWatcher): void {
  const w = watches.get(signal);
  if (w === undefined) return;
  const { watchPrev: prev, watchNext: next } = call;
  if (prev !== undefined) prev.watchNext = next;
  else if (w.head === call) w.head = next;
  else return; // not on this signal's list (already unwatched)
  if (next !== undefined) next.watchPrev = prev;
  call.watchPrev = call.watchNext = undefined;
  if (w.head !== undefined || w.kept) return;
  watches.delete(signal);
  signal.removeEventListener('abort', w.onAbort);
}

/**
 * For a signal that lives as long as something bigger than a call and is shared by many sequential calls — a
 * keep-alive connection's, a worker's shutdown signal: Ballast's one `abort` listener stays on it for the signal's
 * life (it goes when the signal aborts) instead of being added and removed around every call, which costs ≈ 0.3 µs
 * per call on Node 20. Do not use it for per-request signals: the listener would stay until the signal is collected.
 */
export function keepSignalWatched(signal: AbortSignal): void {
  if (signal.aborted) return;
  watchOf(signal).kept = true;
}
