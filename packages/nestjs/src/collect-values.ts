import type { CallContext } from '@ballast/core';
import type { Observable, Subscription } from 'rxjs';

/**
 * Subscribes one attempt's observable and gathers what it emits (HTTP uses the last value; RPC and WS get every
 * value back, in order, once the call has succeeded). With `cancelOnAbort`, an aborted attempt — timeout, lost
 * hedge race, client gone — tears the subscription down, which cancels observable work such as an HttpService
 * request. It is only worth it for Observable-returning handlers: a Promise cannot be cancelled by unsubscribing,
 * and reading `ctx.signal` makes core create an AbortController for the attempt (~5 µs).
 */
export function collectValues(
  source: Observable<unknown>,
  ctx: CallContext,
  cancelOnAbort: boolean,
): Promise<unknown[]> {
  return new Promise<unknown[]>((resolve, reject) => {
    const values: unknown[] = [];
    let done = false;
    let signal: AbortSignal | undefined;
    let onAbort: (() => void) | undefined;
    const subscription: Subscription = source.subscribe({
      next: (value) => values.push(value),
      error: (error: unknown) => {
        done = true;
        if (onAbort !== undefined) signal!.removeEventListener('abort', onAbort);
        reject(error);
      },
      complete: () => {
        done = true;
        if (onAbort !== undefined) signal!.removeEventListener('abort', onAbort);
        resolve(values);
      },
    });
    if (!done && cancelOnAbort) {
      // Read only when the work is really asynchronous: core creates the signal lazily, on first read.
      const s = (signal = ctx.signal);
      onAbort = (): void => {
        subscription.unsubscribe();
        reject(s.reason);
      };
      if (s.aborted) onAbort();
      else s.addEventListener('abort', onAbort, { once: true });
    }
  });
}
