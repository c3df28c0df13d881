// A replica for the multi-process fleet tests (src/redis-fleet.integration.spec.ts, and the failover runs of
// `npm run test:redis-fleet`, src/*.fleet-failover.spec.ts). It runs the stores from their TypeScript sources, no
// build needed (tools/jest/ts-source-loader.cjs). Protocol: JSON lines; {id, op, ...} on stdin, {id, result|error}
// out. Its first argument is a Redis URL (ioredis), or a JSON connection: {"cluster": [{host, port}, ...]} or
// {"sentinels": [{host, port}, ...], "name": "..."} or {"url": "redis://…"} (standalone), with "client": "ioredis" (the default), "node-redis" (the
// `redis` package 5: createCluster / createSentinel) or "node-redis6" (the dev dependency redis6 = redis@6).
'use strict';
const path = require('node:path');
const { root } = require(path.join(__dirname, '..', '..', '..', 'tools', 'jest', 'ts-source-loader.cjs'));

const {
  CircuitBreakerStrategy,
  RateLimitStrategy,
  Resilience,
  ResiliencePolicy,
  stateKey,
} = require('@ballast/core');
const { redisCircuitBreakerStore, redisRateLimitStore, redisLatencyDigestStore } = require(
  path.join(root, 'packages', 'redis', 'src', 'index.ts'),
);

const [url, optionsJson] = process.argv.slice(2);
const options = JSON.parse(optionsJson);

/** ioredis, with the options of the topology tests (__tests__/clients.ts). */
function ioredis(c) {
  const { Cluster, Redis } = require('ioredis');
  if (c.cluster)
    return new Cluster(c.cluster, {
      redisOptions: { maxRetriesPerRequest: 1, connectTimeout: 2000 },
      clusterRetryStrategy: () => 100,
      retryDelayOnFailover: 100,
      retryDelayOnClusterDown: 100,
      slotsRefreshTimeout: 2000,
    });
  return new Redis({ sentinels: c.sentinels, name: c.name, maxRetriesPerRequest: 1, connectTimeout: 2000 });
}

/** node-redis 5 or 6 (`pkg`), as __tests__/clients.ts creates it; connected before the child reports ready. */
let nodeRedisVersion;
function nodeRedis(pkg, c) {
  nodeRedisVersion = require(`${pkg}/package.json`).version;
  const { createClient, createCluster, createSentinel } = require(pkg);
  if (c.url) return createClient({ url: c.url });
  if (c.cluster)
    return createCluster({
      rootNodes: c.cluster.map((n) => ({ socket: { host: n.host, port: n.port } })),
      defaults: { socket: { connectTimeout: 2000, reconnectStrategy: () => 100 } },
    });
  return createSentinel({ name: c.name, sentinelRootNodes: c.sentinels });
}

/** The client the connection argument asks for. */
function connect(connection) {
  if (!connection.startsWith('{'))
    return new (require('ioredis').Redis)(connection, { maxRetriesPerRequest: 1 });
  const c = JSON.parse(connection);
  switch (c.client ?? 'ioredis') {
    case 'ioredis':
      return c.url ? new (require('ioredis').Redis)(c.url, { maxRetriesPerRequest: 1 }) : ioredis(c);
    case 'node-redis':
      return nodeRedis('redis', c);
    case 'node-redis6':
      return nodeRedis('redis6', c);
    default:
      throw new Error(`unknown client ${c.client}`);
  }
}
const client = connect(url);
client.on('error', () => {});
const isNodeRedis = typeof client.evalSha === 'function';
const stores = {
  cb: redisCircuitBreakerStore(client, options),
  rl: redisRateLimitStore(client, options),
  dd: redisLatencyDigestStore(client, options),
  // Patient ones (5 s) for the checks after a failover, the breaker on the caller's clock (`now` from the request)
  // so a probe lease's life does not race the failover's.
  cbAt: redisCircuitBreakerStore(client, { ...options, time: 'caller', commandTimeout: 5000 }),
  rlPatient: redisRateLimitStore(client, { ...options, commandTimeout: 5000 }),
};
const { send, serve } = require('./child-protocol.cjs');
const keyOf = (k) => stateKey(k.policy, k.route ?? undefined);

/** Fires waves of concurrent acquires for `duration` ms; reports the probe leases this replica won. */
async function stampede({ key, params, duration, concurrency }) {
  const k = keyOf(key);
  const leases = [];
  let transitions = 0;
  let rejected = 0;
  const until = Date.now() + duration;
  while (Date.now() < until) {
    const wave = await Promise.all(
      Array.from({ length: concurrency }, async () => ({ ...(await stores.cb.acquire(k, params, 0)) })),
    );
    for (const a of wave) {
      if (a.transition) transitions++;
      if (a.admitted && a.lease) leases.push(a.lease);
      else if (!a.admitted) rejected++;
    }
  }
  return { leases, transitions, rejected };
}

/** `concurrency` loops taking tokens back to back for `duration` ms. */
async function flood({ key, params, duration, concurrency }) {
  const k = keyOf(key);
  let admitted = 0;
  let attempts = 0;
  const until = Date.now() + duration;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < until) {
        attempts++;
        if ((await stores.rl.take(k, params, 0)).ok) admitted++;
      }
    }),
  );
  return { admitted, attempts };
}

/** `count` admitted calls recorded with `outcome`, `concurrency` at a time. */
async function stress({ key, params, count, concurrency, outcome }) {
  const k = keyOf(key);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        next++;
        const a = await stores.cb.acquire(k, params, 0);
        if (a.admitted) await stores.cb.record(k, params, a, outcome, 0);
      }
    }),
  );
  return { recorded: count };
}

/**
 * Calls through one `Resilience` (a rate limit and a breaker on the stores above) on two policies, from `load-start`
 * until `load-stop`: `open` (failOpenOnStoreError) and `strict` (not), each on its own route, `concurrency` loops
 * each, 5 ms apart. `load-stop` answers how often each outcome (`ok` or an error code) came, and the
 * `store_degraded` events per policy.
 */
let load;
function loadStart({ routes, concurrency }) {
  const strategies = () => [
    new RateLimitStrategy({ permits: 100_000, per: '1s' }),
    new CircuitBreakerStrategy({
      failureRatio: 0.9,
      samplingWindow: '1m',
      minThroughput: 1000,
      breakDuration: '1s',
    }),
  ];
  const resilience = new Resilience({
    policies: [
      new ResiliencePolicy({ name: 'open', strategies: strategies(), failOpenOnStoreError: true }),
      new ResiliencePolicy({ name: 'strict', strategies: strategies(), failOpenOnStoreError: false }),
    ],
    stores: { circuitBreaker: stores.cb, rateLimit: stores.rl },
  });
  const outcomes = { open: {}, strict: {} };
  const degraded = { open: 0, strict: 0 };
  resilience.on((e) => {
    if (e.type === 'store_degraded' && e.policy in degraded) degraded[e.policy]++;
  });
  const state = { running: true };
  const loops = ['open', 'strict'].flatMap((policy) =>
    Array.from({ length: concurrency }, async () => {
      while (state.running) {
        const outcome = await resilience
          .run(async () => 'ok', { policy, route: routes[policy] })
          .catch((e) => (e && e.code) || String(e));
        outcomes[policy][outcome] = (outcomes[policy][outcome] ?? 0) + 1;
        await new Promise((r) => setTimeout(r, 5));
      }
    }),
  );
  load = { resilience, state, loops, outcomes, degraded };
  return 'started';
}

async function loadStop() {
  const { resilience, state, loops, outcomes, degraded } = load;
  state.running = false;
  await Promise.all(loops);
  await resilience.close();
  return { outcomes, degraded };
}

async function handle(msg) {
  switch (msg.op) {
    case 'acquire':
      return stores.cb.acquire(keyOf(msg.key), msg.params, 0);
    case 'inspect':
      return stores.cb.inspect(keyOf(msg.key), msg.params, 0);
    case 'take':
      return stores.rl.take(keyOf(msg.key), msg.params, 0);
    case 'observe-many': {
      let last;
      for (const x of msg.values) last = await stores.dd.observe(keyOf(msg.key), msg.params, x, 0);
      return last ?? null;
    }
    case 'acquire-at':
      return { ...(await stores.cbAt.acquire(keyOf(msg.key), msg.params, msg.now)) };
    case 'acquire-many-at':
      return Promise.all(
        Array.from({ length: msg.count }, async () => ({
          ...(await stores.cbAt.acquire(keyOf(msg.key), msg.params, msg.now)),
        })),
      );
    case 'record-at':
      return stores.cbAt.record(keyOf(msg.key), msg.params, msg.admission, msg.outcome, msg.now);
    case 'take-many':
      return Promise.all(
        Array.from(
          { length: msg.count },
          async () => (await stores.rlPatient.take(keyOf(msg.key), msg.params, 0)).ok,
        ),
      );
    case 'load-start':
      return loadStart(msg);
    case 'load-stop':
      return loadStop();
    case 'stampede':
      return stampede(msg);
    case 'flood':
      return flood(msg);
    case 'stress':
      return stress(msg);
    case 'exit':
      if (isNodeRedis) client.destroy();
      else client.disconnect();
      setImmediate(() => process.exit(0));
      return 'bye';
    default:
      throw new Error(`unknown op ${msg.op}`);
  }
}

serve(handle);
// Ready once connected: node-redis connects on `connect()` (its cluster has no keyless PING), ioredis on its own.
(isNodeRedis ? client.connect() : client.ping()).then(
  () => send({ ready: true, client: isNodeRedis ? `node-redis ${nodeRedisVersion}` : 'ioredis' }),
  (error) => send({ ready: false, error: String(error) }),
);
