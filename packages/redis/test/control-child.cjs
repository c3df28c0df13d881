// A replica for the fleet control-plane tests (src/redis-control-fleet.integration.spec.ts): a separate Node process
// with its own ioredis clients and a Resilience on redisControlStore, run from the TypeScript sources (no build).
// Protocol: JSON lines; {id, op, ...} on stdin, {id, result|error} out. Before anything else it makes the calls in
// `options.probes` (the first calls of its life), so the test can see whether standing overrides applied before them.
'use strict';
const path = require('node:path');
const { root } = require(path.join(__dirname, '..', '..', '..', 'tools', 'jest', 'ts-source-loader.cjs'));

const { Redis } = require('ioredis');
const {
  Resilience,
  ResiliencePolicy,
  RetryStrategy,
  CircuitBreakerStrategy,
  policyToSpec,
} = require('@ballast/core');
const { redisControlStore } = require(path.join(root, 'packages', 'redis', 'src', 'index.ts'));

const [url, optionsJson] = process.argv.slice(2);
const options = JSON.parse(optionsJson);
const redisOptions = { maxRetriesPerRequest: 1, connectTimeout: 1000, retryStrategy: () => 100 };
const client = new Redis(url, redisOptions);
client.on('error', () => {});
const subscribers = [];
const control = redisControlStore(client, {
  prefix: options.prefix,
  reconcileInterval: options.reconcileInterval ?? 250,
  heartbeatInterval: options.heartbeatInterval ?? 500,
  subscriber: () => {
    const s = new Redis(url, {
      ...redisOptions,
      connectionName: `ballast-ctl-${options.replicaId}`,
      autoResubscribe: options.autoResubscribe ?? true,
    });
    s.on('error', () => {});
    subscribers.push(s);
    return s;
  },
});
const resilience = new Resilience({
  replicaId: options.replicaId,
  stores: { control },
  policies: [
    new ResiliencePolicy({
      name: 'payments',
      strategies: [
        new CircuitBreakerStrategy({
          failureRatio: 0.5,
          samplingWindow: '10s',
          minThroughput: 4,
          breakDuration: '30s',
        }),
        new RetryStrategy({ maxAttempts: 1 }),
      ],
    }),
    new ResiliencePolicy({ name: 'search', strategies: [new RetryStrategy({ maxAttempts: 1 })] }),
  ],
});
const applied = [];
resilience.on((e) => {
  if (e.type === 'control_applied') applied.push(e);
});

const { send, serve } = require('./child-protocol.cjs');
const errorOf = (e) => ({ kind: e && e.kind, code: e && e.code, message: String(e && e.message) });

/** One call: 'ok' or the rejection's code. */
const call = ({ policy, route }) =>
  resilience
    .run(() => 'ok', { policy, route: route ?? undefined })
    .then(
      (v) => v,
      (e) => (e && e.code) || String(e),
    );

async function handle(msg) {
  switch (msg.op) {
    case 'run':
      return call(msg);
    case 'fail': {
      for (let i = 0; i < msg.count; i++)
        await resilience
          .run(() => Promise.reject(Object.assign(new Error('down'), { code: 'ECONNRESET' })), {
            policy: msg.policy,
          })
          .catch(() => undefined);
      return 'failed';
    }
    case 'admin':
      try {
        // JSON has no undefined: a null argument stands for one.
        const args = msg.args.map((a) => (a === null ? undefined : a));
        return { ok: (await resilience.admin[msg.method](...args)) ?? null };
      } catch (e) {
        return { error: errorOf(e) };
      }
    case 'spec':
      return policyToSpec(resilience.policy(msg.policy));
    case 'applied':
      return applied;
    case 'exit':
      await resilience.close();
      client.disconnect();
      for (const s of subscribers) s.disconnect();
      setImmediate(() => process.exit(0));
      return 'bye';
    default:
      throw new Error(`unknown op ${msg.op}`);
  }
}

serve(handle);

// The first calls of this replica's life, made before it has read anything from the store.
Promise.all((options.probes ?? []).map(call)).then(
  async (probes) => {
    await resilience.ready();
    send({ ready: true, probes });
  },
  (error) => send({ ready: false, error: String(error) }),
);
