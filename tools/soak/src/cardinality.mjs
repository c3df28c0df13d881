// Cardinality: distinct routes through one policy whose strategies all keep per-route state (rate limit bucket,
// bulkhead, breaker window, timeout). Per-key state is bounded by `maxKeysPerPolicy` (SPEC §5, LRU of idle keys), so
// after the first few thousand routes the heap must stop growing: heapUsed is read after `global.gc()` (node
// --expose-gc) once the map is full and again at the end, and their difference must stay under a bound far below
// what a key per route would take.
import { core, testing } from './lib/ballast.mjs';

const {
  Resilience,
  ResiliencePolicy,
  RateLimitStrategy,
  BulkheadStrategy,
  CircuitBreakerStrategy,
  TimeoutStrategy,
} = core;

/** The bound on heap growth between the full map and the end (a leak of ~100 bytes per route exceeds it at 10⁵). */
export const GROWTH_BOUND = 8 * 2 ** 20;

function heapAfterGc() {
  for (let i = 0; i < 3; i++) global.gc();
  return process.memoryUsage().heapUsed;
}

/** Runs `routes` distinct routes; `maxKeysPerPolicy` as core's default (4096) unless given. */
export async function cardinality({ routes, maxKeysPerPolicy }) {
  if (typeof global.gc !== 'function') throw new Error('cardinality needs node --expose-gc');
  const clock = new testing.FakeClock();
  const resilience = new Resilience({
    policies: [
      new ResiliencePolicy({
        name: 'routes',
        strategies: [
          new RateLimitStrategy({ permits: 1000, per: '1s' }),
          new BulkheadStrategy({ maxConcurrency: 4 }),
          new CircuitBreakerStrategy({
            failureRatio: 0.5,
            samplingWindow: '10s',
            minThroughput: 5,
            breakDuration: '5s',
          }),
          new TimeoutStrategy({ timeout: '1s' }),
        ],
      }),
    ],
    clock,
    ...(maxKeysPerPolicy === undefined ? {} : { maxKeysPerPolicy }),
  });
  const fn = (ctx) => ctx.route;
  const run = async (from, to) => {
    for (let i = from; i < to; i++) {
      // one route in 64 fails, so breaker windows hold data too
      if ((i & 63) === 0)
        await resilience
          .run(() => Promise.reject(new Error('x')), { policy: 'routes', route: `r${i}` })
          .catch(() => undefined);
      else await resilience.run(fn, { policy: 'routes', route: `r${i}` });
    }
  };
  const warm = Math.min(routes, 20_000);
  const before = heapAfterGc();
  const t0 = Date.now();
  await run(0, warm);
  const full = heapAfterGc();
  await run(warm, routes);
  const after = heapAfterGc();
  const keys = (await resilience.admin.inspect({ policy: 'routes' })).length;
  const seconds = (Date.now() - t0) / 1000;
  resilience.dispose();
  const limit = maxKeysPerPolicy ?? 4096;
  const problems = [];
  if (keys > limit) problems.push(`${keys} keys held, more than maxKeysPerPolicy ${limit}`);
  if (after - full > GROWTH_BOUND)
    problems.push(
      `heap grew ${((after - full) / 2 ** 20).toFixed(1)} MiB over ${routes - warm} routes after the map filled (bound ${GROWTH_BOUND / 2 ** 20} MiB)`,
    );
  return { routes, limit, keys, before, full, after, seconds, problems };
}
