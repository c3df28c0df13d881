import type { ExecutionContext } from '@nestjs/common';
import { Observable, type Subscriber } from 'rxjs';
import { ObservableCall } from './observable-call';

/**
 * Marks the requests (execution contexts) an interceptor is running a policy for. A handler can list the
 * interceptor more than once — `@Resilient` on the class and on the method, or the global registration of the
 * `headers` option next to a decorator — and Nest then calls each entry with the same context: the first runs
 * the policy, the others (and their re-subscriptions on every retry or hedge) pass straight through while it runs.
 * The claim ends with the call, before its outcome reaches the subscriber: an interceptor of the user's that
 * retries by re-subscribing (nest #11923) calls the first entry again with the same context, and that must be a
 * new call under the policy, not the handler run bare. The mark counts the calls (and streams) still running on
 * the context, not only the latest: a user's interceptor that subscribes `next.handle()` twice at once (`merge`)
 * runs two calls, and the first must stay claimed when the second ends first, or its next attempt would reach the
 * entries listed after this one unclaimed and run the policy nested in itself.
 * The mark also names the entry that claimed: an entry called again while its own claim stands is that fan-out
 * (NestJS 12 subscribes each copy as soon as its `intercept` returns, so the second copy's `intercept` runs while the
 * first copy's call is claimed; NestJS 11 called both before subscribing either) and runs a call of its own, while
 * any other entry passes through. Class-level decorators attach a subclass of their own
 * (`ResilienceControllerInterceptor`), so the class and method entries of one handler are distinct entries.
 * A property on the context, not a WeakSet: a weak collection that gains an entry per request makes every
 * garbage collection walk its table, which cost ≈ 3 µs per request (a CPU profile shows it as GC time).
 */
const CLAIMED = Symbol('ballast.claimed');
const CLAIMER = Symbol('ballast.claimer');

/** The number of calls and streams entries are running on the context that have not ended, and who claimed. */
export type Claimable = ExecutionContext & { [CLAIMED]?: number; [CLAIMER]?: object };

/** Whether another entry's call or stream is running on the context: this entry then passes through. */
export function claimedByAnother(context: ExecutionContext, entry: object): boolean {
  return ((context as Claimable)[CLAIMED] ?? 0) > 0 && (context as Claimable)[CLAIMER] !== entry;
}

/** Claims the context for `entry`: one more call or stream running on it. */
function claim(context: Claimable, entry: object): void {
  context[CLAIMED] = (context[CLAIMED] ?? 0) + 1;
  context[CLAIMER] = entry;
}

/** An {@link ObservableCall} that holds a claim on its context until it ends or its consumer leaves. */
export class ClaimingCall extends ObservableCall {
  #claimed = true;

  constructor(
    subscriber: Subscriber<unknown>,
    private readonly context: Claimable,
    entry: object,
  ) {
    super(subscriber);
    claim(context, entry);
  }

  /** Ends the claim (once): before the subscriber hears the end, or when it unsubscribes first. */
  release(): void {
    if (!this.#claimed) return;
    this.#claimed = false;
    this.context[CLAIMED]!--;
  }

  override settled(ok: boolean, result: unknown): void {
    this.release();
    super.settled(ok, result);
  }
}

/**
 * `source`, with the request claimed by this entry while it runs: the claim ends before the subscriber hears the
 * end (an error, the completion), so a user's retry that re-subscribes at once finds it ended.
 */
export function claimWhile<T>(context: Claimable, entry: object, source: Observable<T>): Observable<T> {
  return new Observable<T>((subscriber) => {
    let claimed = true;
    claim(context, entry);
    const release = (): void => {
      if (!claimed) return;
      claimed = false;
      context[CLAIMED]!--;
    };
    const subscription = source.subscribe({
      next: (value) => subscriber.next(value),
      error: (error: unknown) => {
        release();
        subscriber.error(error);
      },
      complete: () => {
        release();
        subscriber.complete();
      },
    });
    return () => {
      release();
      subscription.unsubscribe();
    };
  });
}
