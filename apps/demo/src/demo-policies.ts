import type { PolicySpec } from '@ballast/core';

/**
 * The demo's policies in their JSON form — the same shape `PUT /resilience/policies/:name` accepts, so what you
 * read here is what you retune over HTTP.
 */
export const DEMO_POLICIES: PolicySpec[] = [
  {
    // Public catalog reads: a rate limit (per instance, or fleet-wide with REDIS_URL), so one noisy client cannot
    // starve the rest.
    name: 'public-api',
    strategies: [{ type: 'rateLimit', permits: 5, per: '10s' }],
  },
  {
    // Calls to the inventory backend: fail fast when it is down, retry a blip once, never wait more than 500 ms.
    name: 'inventory',
    strategies: [
      {
        type: 'circuitBreaker',
        failureRatio: 0.5,
        samplingWindow: '10s',
        minThroughput: 5,
        breakDuration: '10s',
      },
      { type: 'retry', maxAttempts: 2, backoff: { base: '50ms', max: '200ms' } },
      { type: 'timeout', timeout: '500ms' },
      // A chaos drill, off until an operator turns it on (PUT /resilience/policies/inventory/chaos): a third of the
      // stock reads stall past the timeout, to watch the timeout, the retry and the breaker do their work.
      { type: 'chaos', enabled: false, latency: { rate: 0.33, delay: '800ms' } },
    ],
  },
  {
    // Idempotent stock reads: if the first answer is slower than 100 ms, ask again and take the first answer.
    name: 'inventory-hedged',
    strategies: [{ type: 'timeout', timeout: '3s' }],
    hedge: { delay: '100ms', maxAttempts: 2 },
  },
  {
    // Checkout: at most 2 reservations in flight, 4 waiting; waiters older than the CoDel target are shed, and
    // BEST_EFFORT traffic goes first when the queue is full.
    name: 'checkout',
    strategies: [
      {
        type: 'bulkhead',
        maxConcurrency: 2,
        maxQueue: 4,
        queueTarget: '200ms',
        queueInterval: '1s',
        prioritized: true,
      },
    ],
  },
];
