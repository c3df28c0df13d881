/**
 * One `abort` listener per caller signal, however many calls share it. A long-lived signal (a request's, a
 * server's shutdown signal) is often passed to many concurrent calls; one listener per call would trip Node's
 * `MaxListenersExceededWarning` past 10 (peers.md §5 item 25) and costs an `addEventListener` per call. Here the
 * first call on a signal attaches the listener, the last one to finish detaches it.
 */
export interface SignalWatcher {
  cancelAll(reason: unknown): void;
}

interface Watch {
  readonly calls: Set<SignalWatcher>;
  readonly onAbort: () => void;
}

const watches = new WeakMap<AbortSignal, Watch>();

/** Cancels `call` with `signal.reason` when the signal aborts (until {@link unwatchSignal}). */
export function watchSignal(signal: AbortSignal, call: SignalWatcher): void {
  let w = watches.get(signal);
  if (w === undefined) {
    const calls = new Set<SignalWatcher>();
    const onAbort = (): void => {
      watches.delete(signal);
      // A copy: cancelling aborts ctx signals, whose listeners (user code) may start or end other calls.
      for (const c of [...calls]) c.cancelAll(signal.reason);
    };
    w = { calls, onAbort };
    watches.set(signal, w);
    signal.addEventListener('abort', onAbort, { once: true });
  }
  w.calls.add(call);
}

export function unwatchSignal(signal: AbortSignal, call: SignalWatcher): void {
  const w = watches.get(signal);
  if (w === undefined || !w.calls.delete(call) || w.calls.size > 0) return;
  watches.delete(signal);
  signal.removeEventListener('abort', w.onAbort);
}
