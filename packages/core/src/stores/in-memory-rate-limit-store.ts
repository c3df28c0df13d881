import { TokenBucket } from '@ballast/token-bucket';
import type { RateLimitParams, RateLimitResult, RateLimitStore, StateKey } from './ports';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** A bucket and its reused result objects (the port allows reuse), so `take` allocates nothing. */
interface RateLimitEntry {
  bucket: TokenBucket;
  /**
   * The latest `now` seen for this key. The bucket keeps its own, but a retune replaces the bucket, so the store
   * carries it across: a clock that stepped back before (or after) a retune still gains nothing.
   */
  latest: number;
  readonly ok: Mutable<Extract<RateLimitResult, { ok: true }>>;
  readonly denied: Mutable<Extract<RateLimitResult, { ok: false }>>;
}

const sameParams = (b: TokenBucket, p: RateLimitParams): boolean =>
  b.options.permits === p.permits && b.options.per === p.per && b.options.burst === p.burst;

/**
 * The default {@link RateLimitStore}: one {@link TokenBucket} per key, per process. Each bucket starts full and
 * refills continuously; time comes only from `now`. A retune keeps the tokens a key holds (capped at the new burst)
 * instead of refilling it, so changing a limit never lets an extra burst through, and keeps the latest time seen, so
 * an earlier `now` is still treated as that time (as `TokenBucket` does) and never refills the retuned bucket.
 */
export class InMemoryRateLimitStore implements RateLimitStore {
  readonly #entries = new Map<string, RateLimitEntry>();

  /** Number of keys held (for tests of bounded memory). */
  get size(): number {
    return this.#entries.size;
  }

  take(key: StateKey, params: RateLimitParams, now: number, n = 1): RateLimitResult {
    const e = this.#entry(key, params, now);
    if (e.bucket.tryTake(now, n)) {
      e.ok.tokens = e.bucket.tokens(now);
      return e.ok;
    }
    e.denied.tokens = e.bucket.tokens(now);
    e.denied.retryAfter = e.bucket.msUntil(now, n);
    return e.denied;
  }

  tokens(key: StateKey, params: RateLimitParams, now: number): number {
    const e = this.#entries.get(key.id);
    return e === undefined ? params.burst : this.#entry(key, params, now).bucket.tokens(now);
  }

  reset(key: StateKey): void {
    this.#entries.delete(key.id);
  }

  evict(key: StateKey): void {
    this.#entries.delete(key.id);
  }

  #entry(key: StateKey, params: RateLimitParams, now: number): RateLimitEntry {
    let e = this.#entries.get(key.id);
    if (e === undefined) {
      e = {
        bucket: new TokenBucket(params),
        latest: now,
        ok: { ok: true, tokens: 0 },
        denied: { ok: false, tokens: 0, retryAfter: 0 },
      };
      this.#entries.set(key.id, e);
    } else {
      if (now > e.latest) e.latest = now;
      if (!sameParams(e.bucket, params)) {
        const held = e.bucket.tokens(now);
        e.bucket = new TokenBucket(params);
        // Taking at the latest time seen (not `now`) also makes that time the new bucket's own latest.
        e.bucket.tryTake(e.latest, Math.max(0, params.burst - held));
      }
    }
    return e;
  }
}
