/**
 * One `abort` listener per caller signal, however many calls share it. A long-lived signal (a request's, a
 * server's shutdown signal) is often passed to many concurrent calls; one listener per call would trip Node's
 * `MaxListenersExceededWarning` past 10 (peers.md §5 item 25) and costs an `addEventListener` per call. Here the
 * first call on a signal attaches the listener, the last one to finish detaches it — unless the signal was
 * {@link keepSignalWatched kept watched}.
 */
export interface SignalWatcher {
  cancelAll(reason: unknown): void;
}

interface Watch {
  readonly calls: Set<SignalWatcher>;
  readonly onAbort: () => void;
  /** Kept for the signal's life: the listener stays while no call runs (see keepSignalWatched). */
  kept: boolean;
}

const watches = new WeakMap<AbortSignal, Watch>();

function watchOf(signal: AbortSignal): Watch {
  let w = watches.get(signal);
  if (w === undefined) {
    const calls = new Set<SignalWatcher>();
    const onAbort = (): void => {
      watches.delete(signal);
      // A copy: cancelling aborts ctx signals, whose listeners (user code) may start or end other calls.
      for (const c of [...calls]) c.cancelAll(signal.reason);
    };
    w = { calls, onAbort, kept: false };
    watches.set(signal, w);
    signal.addEventListener('abort', onAbort, { once: true });
  }
  return w;
}

/** Cancels `call` with `signal.reason` when the signal aborts (until {@link unwatchSignal}). */
export function watchSignal(signal: AbortSignal, call: SignalWatcher): void {
  watchOf(signal).calls.add(call);
}

export function unwatchSignal(signal: AbortSignal, call: SignalWatcher): void {
  const w = watches.get(signal);
  if (w === undefined || !w.calls.delete(call) || w.calls.size > 0 || w.kept) return;
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
