// The variants the pipeline benches measure, by name: Ballast's policies, cockatiel, opossum, the bare await.
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
export const fn = async () => 1;

function ballast(extra = {}) {
  const c = require('@ballast/core');
  const strategies = [
    new c.RateLimitStrategy({ permits: 1e9, per: '1s' }),
    new c.CircuitBreakerStrategy({
      failureRatio: 0.5,
      samplingWindow: '10s',
      minThroughput: 5,
      breakDuration: '10s',
    }),
    new c.RetryStrategy({ maxAttempts: 3, backoff: { base: 10, max: 1000 } }),
    new c.TimeoutStrategy({ timeout: '1s' }),
  ];
  const policies = [
    new c.ResiliencePolicy({ name: 'full', strategies }),
    new c.ResiliencePolicy({
      name: 'bulkhead',
      strategies: [new c.BulkheadStrategy({ maxConcurrency: 100 }), ...strategies],
    }),
    new c.ResiliencePolicy({ name: 'nothing', strategies: [] }),
    new c.ResiliencePolicy({ name: 'rl-cb-retry', strategies: strategies.slice(0, 3) }),
    new c.ResiliencePolicy({
      name: 'rl-bh-cb-retry',
      strategies: [new c.BulkheadStrategy({ maxConcurrency: 100 }), ...strategies.slice(0, 3)],
    }),
    new c.ResiliencePolicy({ name: 'retry', strategies: [strategies[2]] }),
    new c.ResiliencePolicy({ name: 'cb-timeout', strategies: [strategies[1], strategies[3]] }),
    new c.ResiliencePolicy({ name: 'breaker', strategies: [strategies[1]] }),
    new c.ResiliencePolicy({ name: 'timeout', strategies: [strategies[3]] }),
    new c.ResiliencePolicy({
      name: 'hedge',
      strategies: [],
      hedge: new c.HedgeStrategy({ delay: '1s', maxAttempts: 2 }),
    }),
  ];
  return new c.Resilience({ policies, ...extra });
}

function cockatiel(kind) {
  const k = require('cockatiel');
  const breaker = k.circuitBreaker(k.handleAll, {
    halfOpenAfter: 10_000,
    breaker: new k.SamplingBreaker({ threshold: 0.5, duration: 10_000, minimumRps: 5 }),
  });
  const retry = k.retry(k.handleAll, { maxAttempts: 3, backoff: new k.ExponentialBackoff() });
  const timeout = k.timeout(1000, k.TimeoutStrategy.Cooperative);
  if (kind === 'bulkhead') return k.wrap(k.bulkhead(100, 0), breaker, retry, timeout);
  if (kind === 'bulkhead-no-timeout') return k.wrap(k.bulkhead(100, 0), breaker, retry);
  if (kind === 'bulkhead-only') return k.bulkhead(100, 0);
  return k.wrap(breaker, retry, timeout);
}

/** The call of one variant: a function returning the promise of one call of `async () => 1`. */
export function makeVariant(variant) {
  switch (variant) {
    case 'bare':
      return () => fn();
    case 'ballast-none': {
      const r = ballast();
      const o = { policy: 'nothing' };
      return () => r.run(fn, o);
    }
    case 'bare-als': {
      // A process where AsyncLocalStorage is already in use (OpenTelemetry, loggers, Nest request scopes…).
      const { AsyncLocalStorage } = require('node:async_hooks');
      new AsyncLocalStorage().run({}, () => {});
      return () => fn();
    }
    case 'bare-now2': {
      // Node's own price of the two clock reads a policy with a breaker or a rate limit makes per call (its start and
      // its end; `performance.now()`, as Ballast's system clock reads it).
      let t = 0;
      return () => {
        t += performance.now();
        const p = fn();
        t -= performance.now();
        return p;
      };
    }
    case 'bare-als-scope': {
      // Node's own price of one frame entered the way Ballast enters it on Node 24 (core's runInFrame): enterWith
      // inside an AsyncResource's scope, which puts the caller's frame back without copying it as run() does.
      const { AsyncLocalStorage, AsyncResource } = require('node:async_hooks');
      const als = new AsyncLocalStorage();
      const enter = (store) => {
        als.enterWith(store);
        return fn();
      };
      let i = 0;
      return () => new AsyncResource('bench.frame').runInAsyncScope(enter, undefined, { call: i++ });
    }
    case 'bare-als-run': {
      // Node's own price of one AsyncLocalStorage frame per call: what a policy that needs one (a timeout) pays.
      const { AsyncLocalStorage } = require('node:async_hooks');
      const als = new AsyncLocalStorage();
      let i = 0;
      return () => als.run({ call: i++ }, fn);
    }
    case 'ballast-rl-cb-retry-timeout-noctx': {
      const r = ballast({ ambientContext: false });
      const o = { policy: 'full' };
      return () => r.run(fn, o);
    }
    case 'ballast-cb-timeout': {
      const r = ballast();
      const o = { policy: 'cb-timeout' };
      return () => r.run(fn, o);
    }
    case 'ballast-cb-timeout-noctx': {
      const r = ballast({ ambientContext: false });
      const o = { policy: 'cb-timeout' };
      return () => r.run(fn, o);
    }
    case 'ballast-rl-cb-retry-timeout-als': {
      // A service that already uses AsyncLocalStorage (OpenTelemetry context, a request-scoped logger…).
      const { AsyncLocalStorage } = require('node:async_hooks');
      new AsyncLocalStorage().run({}, () => {});
      const r = ballast();
      const o = { policy: 'full' };
      return () => r.run(fn, o);
    }
    case 'ballast-cb-timeout-als': {
      // opossum's policy on the same footing as the opossum-cb-timeout-als row.
      const { AsyncLocalStorage } = require('node:async_hooks');
      new AsyncLocalStorage().run({}, () => {});
      const r = ballast();
      const o = { policy: 'cb-timeout' };
      return () => r.run(fn, o);
    }
    case 'ballast-rl-cb-retry-noctx': {
      const r = ballast({ ambientContext: false });
      const o = { policy: 'rl-cb-retry' };
      return () => r.run(fn, o);
    }
    case 'ballast-rl-cb-retry-timeout': {
      const r = ballast();
      const o = { policy: 'full' };
      return () => r.run(fn, o);
    }
    case 'ballast-rl-cb-retry-timeout-signal': {
      // Review fix: the function reads `ctx.signal`, as one that passes it on (fetch, a DB driver) does. cockatiel's
      // cooperative timeout creates its signal on every call; Ballast only when read, so the other Ballast rows are its
      // best case, not the equivalent of the cockatiel rows for a function that uses the signal.
      const r = ballast();
      const o = { policy: 'full' };
      const reads = async (ctx) => (ctx.signal.aborted ? 0 : 1);
      return () => r.run(reads, o);
    }
    case 'ballast-rl-bh-cb-retry': {
      const r = ballast();
      const o = { policy: 'rl-bh-cb-retry' };
      return () => r.run(fn, o);
    }
    case 'cockatiel-bulkhead-cb-retry': {
      const p = cockatiel('bulkhead-no-timeout');
      return () => p.execute(fn);
    }
    case 'opossum-cb': {
      const CircuitBreaker = require('opossum');
      const b = new CircuitBreaker(fn, { timeout: false });
      return () => b.fire();
    }
    case 'ballast-bulkhead-rl-cb-retry-timeout': {
      const r = ballast();
      const o = { policy: 'bulkhead' };
      return () => r.run(fn, o);
    }
    case 'ballast-retry':
    case 'ballast-breaker':
    case 'ballast-timeout':
    case 'ballast-hedge': {
      const r = ballast();
      const o = { policy: variant.slice('ballast-'.length) };
      return () => r.run(fn, o);
    }
    case 'cockatiel-cb-retry-timeout': {
      const p = cockatiel('');
      return () => p.execute(fn);
    }
    case 'cockatiel-bulkhead-cb-retry-timeout': {
      const p = cockatiel('bulkhead');
      return () => p.execute(fn);
    }
    case 'cockatiel-bulkhead': {
      const p = cockatiel('bulkhead-only');
      return () => p.execute(fn);
    }
    case 'opossum-cb-timeout-als': {
      // opossum in a process where AsyncLocalStorage is already on (what Ballast's default ambient context costs).
      const { AsyncLocalStorage } = require('node:async_hooks');
      new AsyncLocalStorage().run({}, () => {});
      const CircuitBreaker = require('opossum');
      const b = new CircuitBreaker(fn, { timeout: 1000 });
      return () => b.fire();
    }
    case 'opossum-cb-timeout-lean': {
      // opossum with its latency percentiles and its 1 s snapshots off (opossum's own options for lean breakers).
      const CircuitBreaker = require('opossum');
      const b = new CircuitBreaker(fn, {
        timeout: 1000,
        rollingPercentilesEnabled: false,
        enableSnapshots: false,
      });
      return () => b.fire();
    }
    case 'opossum-cb-timeout': {
      const CircuitBreaker = require('opossum');
      const b = new CircuitBreaker(fn, { timeout: 1000 });
      return () => b.fire();
    }
    default:
      throw new Error(`unknown variant ${variant}`);
  }
}
