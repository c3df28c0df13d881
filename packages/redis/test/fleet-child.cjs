// A replica for the multi-process fleet tests (src/redis-fleet.integration.spec.ts). It runs the stores from their
// TypeScript sources, no build needed (tools/jest/ts-source-loader.cjs). Protocol: JSON lines; {id, op, ...} on
// stdin, {id, result|error} out.
'use strict';
const path = require('node:path');
const { root } = require(path.join(__dirname, '..', '..', '..', 'tools', 'jest', 'ts-source-loader.cjs'));

const { Redis } = require('ioredis');
const { stateKey } = require('@ballast/core');
const { redisCircuitBreakerStore, redisRateLimitStore, redisLatencyDigestStore } = require(
  path.join(root, 'packages', 'redis', 'src', 'index.ts'),
);

const [url, optionsJson] = process.argv.slice(2);
const options = JSON.parse(optionsJson);
const client = new Redis(url, { maxRetriesPerRequest: 1 });
client.on('error', () => {});
const stores = {
  cb: redisCircuitBreakerStore(client, options),
  rl: redisRateLimitStore(client, options),
  dd: redisLatencyDigestStore(client, options),
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
    case 'stampede':
      return stampede(msg);
    case 'flood':
      return flood(msg);
    case 'stress':
      return stress(msg);
    case 'exit':
      client.disconnect();
      setImmediate(() => process.exit(0));
      return 'bye';
    default:
      throw new Error(`unknown op ${msg.op}`);
  }
}

serve(handle);
client.ping().then(
  () => send({ ready: true }),
  (error) => send({ ready: false, error: String(error) }),
);
