import { BackoffStrategy } from '../strategies/backoff-strategy';
import { RetryStrategy } from '../strategies/retry-strategy';
import { TimeoutStrategy } from '../strategies/timeout-strategy';
import { ResiliencePolicy } from './resilience-policy';

/**
 * `transient` (SPEC §4): for calls to a remote dependency that may fail transiently. 3 attempts on
 * `infrastructure` errors (network errors, 5xx, 408, attempt timeouts), 100 ms → 5 s exponential backoff with
 * decorrelated jitter (AWS "Exponential Backoff And Jitter": spreads a thundering herd of retries best among the
 * variants that stay close to the exponential curve), and a 30 s per-attempt timeout so a hung socket cannot hold a
 * call forever. No breaker or rate limit: those need per-dependency numbers a default cannot guess.
 */
export const TRANSIENT_POLICY = new ResiliencePolicy({
  name: 'transient',
  strategies: [
    new RetryStrategy({
      maxAttempts: 3,
      retryOn: ['infrastructure'],
      backoff: new BackoffStrategy({ base: '100ms', max: '5s', jitter: 'decorrelated' }),
    }),
    new TimeoutStrategy({ timeout: '30s' }),
  ],
});

/**
 * `occ` (SPEC §4): optimistic-concurrency conflicts (`concurrency` errors: a version check failed because another
 * writer won). The conflict is local and short-lived, so the retry is fast — 10 ms base, 1 s cap — with full jitter,
 * which de-synchronises the competing writers most (two writers that collided once should not collide again). No
 * timeout: the work is usually a local transaction whose own timeouts apply.
 */
export const OCC_POLICY = new ResiliencePolicy({
  name: 'occ',
  strategies: [
    new RetryStrategy({
      maxAttempts: 3,
      retryOn: ['concurrency'],
      backoff: new BackoffStrategy({ base: '10ms', max: '1s', jitter: 'full' }),
    }),
  ],
});

/** The policies every `Resilience` has unless the user registers one of the same name. */
export const BUILTIN_POLICIES: readonly ResiliencePolicy[] = Object.freeze([TRANSIENT_POLICY, OCC_POLICY]);
