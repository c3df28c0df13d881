// One row per Redis topology and client: ops/s and latency of two store operations (rate-limit take, breaker acquire
// + record) on a standalone Redis, a three-master Cluster and a Sentinel set-up, each started here from the
// `redis-server` binary on free loopback ports (never the machine's 6379), through ioredis (plain and with
// `enableAutoPipelining`) and node-redis. Writes the "redis-topologies" section of BENCHMARKS.md.
// Rerun alone: `npx nx run-many -t build -p @ballast/redis && node tools/bench/src/redis-topologies.bench.mjs`.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { stateKey } from '@ballast/core';
import { redisCircuitBreakerStore, redisRateLimitStore } from '@ballast/redis';
import { Cluster, Redis } from 'ioredis';
import { createClient, createCluster, createSentinel } from 'redis';
import { ROOT, machine, writeSection } from './lib/report.mjs';

// The topologies of the package's tests (packages/redis/src/__tests__/redis-topology.ts), run from source.
const require = createRequire(import.meta.url);
require(path.join(ROOT, 'tools', 'jest', 'ts-source-loader.cjs'));
const { RedisClusterTopology, RedisSentinelTopology, cli, freePortRange, until } = require(
  path.join(ROOT, 'packages', 'redis', 'src', '__tests__', 'redis-topology.ts'),
);

const SEQUENTIAL = Number(process.env.BENCH_N ?? 2000);
const WARMUP = 200;
const THROUGHPUT_MS = 1500;
const CONCURRENCY = 64;
const prefix = 'ballast-bench';

/** A standalone redis-server of the bench's own: no persistence, killed at the end. */
async function standalone() {
  const port = await freePortRange(1);
  const dir = mkdtempSync(path.join(tmpdir(), 'ballast-bench-redis-'));
  const server = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: 'ignore' },
  );
  await until(10_000, 'standalone redis-server answers', () => cli(port, 'PING') === 'PONG');
  return {
    port,
    stop: async () => {
      const exited = new Promise((r) => server.once('exit', r));
      server.kill('SIGKILL');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const quiet = (c) => {
  c.on('error', () => {});
  return c;
};

/** [client label, connect() → { client, close() }] per topology. */
function clientsOf(topology) {
  const io = (options) => {
    if (topology.kind === 'standalone')
      return new Redis({ port: topology.port, host: '127.0.0.1', ...options });
    if (topology.kind === 'sentinel')
      return new Redis({ sentinels: topology.sentinelNodes, name: topology.name, ...options });
    return new Cluster(topology.seeds, { enableAutoPipelining: options.enableAutoPipelining ?? false });
  };
  const ioredis = (options) => async () => {
    const client = quiet(io(options));
    await client.ping();
    return { client, close: async () => client.disconnect() };
  };
  const nodeRedis = async () => {
    const client = quiet(
      topology.kind === 'standalone'
        ? createClient({ url: `redis://127.0.0.1:${topology.port}` })
        : topology.kind === 'sentinel'
          ? createSentinel({ name: topology.name, sentinelRootNodes: topology.sentinelNodes })
          : createCluster({ rootNodes: topology.seeds.map((s) => ({ socket: s })) }),
    );
    await client.connect();
    return { client, close: async () => client.destroy() };
  };
  return [
    ['ioredis 6.0.0', ioredis({})],
    ['ioredis 6.0.0, enableAutoPipelining', ioredis({ enableAutoPipelining: true })],
    ['node-redis 5.12.4', nodeRedis],
  ];
}

async function sequential(op) {
  for (let i = 0; i < WARMUP; i++) await op();
  const times = new Float64Array(SEQUENTIAL);
  for (let i = 0; i < SEQUENTIAL; i++) {
    const t = performance.now();
    await op();
    times[i] = performance.now() - t;
  }
  times.sort();
  return { p50: times[times.length >> 1], p99: times[Math.floor(times.length * 0.99)] };
}

async function throughput(op) {
  let done = 0;
  const started = performance.now();
  const until = started + THROUGHPUT_MS;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < until) {
        await op();
        done++;
      }
    }),
  );
  return done / ((performance.now() - started) / 1000);
}

const breaker = {
  failureRatio: 0.5,
  samplingWindow: 10_000,
  minThroughput: 1e9,
  breakDuration: 5000,
  halfOpenMaxCalls: 1,
};
const roomy = { permits: 1e9, per: 1000, burst: 1e9 };

async function measure(client) {
  const opts = { prefix, commandTimeout: 5000 };
  const cb = redisCircuitBreakerStore(client, opts);
  const rl = redisRateLimitStore(client, opts);
  const key = stateKey('bench', 'topologies');
  const operations = {
    take: () => rl.take(key, roomy, 0),
    acquireRecord: async () => cb.record(key, breaker, await cb.acquire(key, breaker, 0), 'success', 0),
  };
  const out = {};
  for (const [name, op] of Object.entries(operations)) {
    const s = await sequential(op);
    out[name] = { ...s, ops: await throughput(op) };
  }
  return out;
}

async function main() {
  const where = machine();
  const version = /v=(\S+)/.exec(
    require('node:child_process').execFileSync('redis-server', ['--version'], { encoding: 'utf8' }),
  )?.[1];
  const us = (ms) => (ms * 1000).toFixed(0);
  const ops = (x) => Math.round(x).toLocaleString('en-US');
  const rows = [];
  const starts = [
    ['standalone', async () => ({ kind: 'standalone', ...(await standalone()) })],
    [
      'Cluster (3 masters + 3 replicas)',
      async () => Object.assign(await RedisClusterTopology.start(), { kind: 'cluster' }),
    ],
    [
      'Sentinel (1 master + 1 replica, 3 sentinels)',
      async () => Object.assign(await RedisSentinelTopology.start(), { kind: 'sentinel' }),
    ],
  ];
  for (const [label, start] of starts) {
    const topology = await start();
    try {
      for (const [clientLabel, connect] of clientsOf(topology)) {
        const { client, close } = await connect();
        try {
          const r = await measure(client);
          rows.push(
            `| ${label} | ${clientLabel} | ${ops(r.take.ops)} | ${us(r.take.p50)} | ${us(r.take.p99)} | ${ops(r.acquireRecord.ops)} | ${us(r.acquireRecord.p50)} | ${us(r.acquireRecord.p99)} |`,
          );
          console.log(rows.at(-1));
        } finally {
          await close();
        }
      }
    } finally {
      await topology.stop();
    }
  }
  writeSection(
    'redis-topologies',
    `## Redis stores per topology and client (@ballast/redis)

Two store operations — a rate-limit take (one EVALSHA) and a breaker acquire + record success (two) — on one
(policy, route), so on a Cluster every call goes to the one master that owns its slot. Each topology is started
for the run from \`redis-server\` ${version} on loopback, no persistence: a standalone server, a three-master Cluster
with one replica each, and one master with one replica behind three sentinels. Each client is one connection (the
Cluster clients: one per master) created as the README shows; \`enableAutoPipelining\` batches the commands issued
in one event-loop tick into one write (ioredis only).

- ops/s: ${CONCURRENCY} calls in flight for ${THROUGHPUT_MS / 1000} s.
- p50 / p99: ${SEQUENTIAL} sequential calls (one in flight) after ${WARMUP} warm-up calls, in µs.
- Machine: ${where}. Measured ${new Date().toISOString().slice(0, 10)}.

| topology | client | take ops/s | take p50 µs | take p99 µs | acquire + record ops/s | acquire + record p50 µs | acquire + record p99 µs |
|---|---|---:|---:|---:|---:|---:|---:|
${rows.join('\n')}

When the load average is above the core count, p99 mostly measures the scheduler, not Redis or the client.
Rerun alone: \`npx nx run-many -t build -p @ballast/redis && node tools/bench/src/redis-topologies.bench.mjs\` (needs
the \`redis-server\` and \`redis-cli\` binaries). The machine is shared and noisy: compare rows measured together, not
across runs.`,
  );
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
