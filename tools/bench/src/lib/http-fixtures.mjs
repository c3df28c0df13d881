// What the HTTP bench's server and the route probe share: Nest decorators applied from plain JS, and the peers'
// equivalents of the bench policy, called from a handler the way a Nest user calls them.
import CircuitBreaker from 'opossum';
import {
  ExponentialBackoff,
  SamplingBreaker,
  TimeoutStrategy,
  circuitBreaker,
  handleAll,
  retry,
  timeout,
  wrap,
} from 'cockatiel';

/** Plain JS has no decorator syntax: apply Nest's decorators by hand, exactly as compiled TypeScript does. */
export function decorateMethod(cls, name, ...decorators) {
  const descriptor = Object.getOwnPropertyDescriptor(cls.prototype, name);
  for (const d of decorators.reverse()) d(cls.prototype, name, descriptor);
  Object.defineProperty(cls.prototype, name, descriptor);
}

/** The handler body `{ ok: true }` through opossum: breaker + timeout 1 s (it has no rate limiter or retry). */
const breaker = new CircuitBreaker(async () => ({ ok: true }), { timeout: 1000 });
export const throughOpossum = () => breaker.fire();

/** The same through cockatiel: wrap(breaker, retry(3), timeout(1 s)) (it has no rate limiter). */
const policy = wrap(
  circuitBreaker(handleAll, {
    halfOpenAfter: 5_000,
    breaker: new SamplingBreaker({ threshold: 0.5, duration: 10_000, minimumRps: 20 }),
  }),
  retry(handleAll, { maxAttempts: 3, backoff: new ExponentialBackoff({ initialDelay: 10, maxDelay: 100 }) }),
  timeout(1000, TimeoutStrategy.Cooperative),
);
export const throughCockatiel = () => policy.execute(async () => ({ ok: true }));
