// Round-trip latency, throughput and memory per key of the @ballast/redis stores against the local Redis
// (REDIS_URL, default redis://127.0.0.1:6379). Writes the "redis" section of BENCHMARKS.md.
// Rerun alone: `npx nx run-many -t build -p @ballast/redis && node tools/bench/src/redis-stores.bench.mjs`.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { stateKey } from '@ballast/core';
import { redisCircuitBreakerStore, redisLatencyDigestStore, redisRateLimitStore } from '@ballast/redis';
import { Redis } from 'ioredis';
import { machine, writeSection } from './lib/report.mjs';

const URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const SEQUENTIAL = Number(process.env.BENCH_N ?? 5000);
const WARMUP = 500;
const THROUGHPUT_MS = 2000;
const CONCURRENCY = 64;

const prefix = `ballast-bench-${randomBytes(4).toString('hex')}`;
const redis = new Redis(URL, { maxRetriesPerRequest: 1 });
const opts = { prefix, commandTimeout: 5000 };
const cb = redisCircuitBreakerStore(redis, opts);
const cached = redisCircuitBreakerStore(redis, { ...opts, localCacheTtl: 100 });
const rl = redisRateLimitStore(redis, opts);
const dd = redisLatencyDigestStore(redis, opts);

const breaker = {
  failureRatio: 0.5,
  samplingWindow: 10_000,
  minThroughput: 1e9,
  breakDuration: 5000,
  halfOpenMaxCalls: 1,
};
const tripping = { ...breaker, minThroughput: 10, breakDuration: 3_600_000 };
const roomy = { permits: 1e9, per: 1000, burst: 1e9 };
const empty = { permits: 1, per: 3_600_000, burst: 1 };
const digest = { quantile: 0.99, window: 512 };
// lognormal latencies, median 20 ms
const samples = Array.from({ length: 4096 }, (_, i) => {
  const u = (i * 0.6180339887) % 1 || 0.5;
  const v = (i * 0.7548776662) % 1 || 0.5;
  return 20 * Math.exp(0.6 * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v));
});

const closedKey = stateKey('bench', 'closed');
const openKey = stateKey('bench', 'open');
const key = stateKey('bench', 'keys');
const clock = () => performance.now();

/** name → one operation (returns a promise or a value). */
const operations = [
  ['PING (raw ioredis, for reference)', () => redis.ping()],
  ['breaker acquire (closed)', () => cb.acquire(closedKey, breaker, clock())],
  [
    'breaker acquire + record success (closed)',
    async () => {
      const a = await cb.acquire(closedKey, breaker, clock());
      return cb.record(closedKey, breaker, a, 'success', clock());
    },
  ],
  ['breaker acquire (open, rejected)', () => cb.acquire(openKey, tripping, clock())],
  ['breaker acquire (closed, localCacheTtl 100 ms)', () => cached.acquire(closedKey, breaker, clock())],
  ['breaker inspect', () => cb.inspect(closedKey, breaker, clock())],
  ['rate limit take (admitted)', () => rl.take(key, roomy, clock())],
  ['rate limit take (denied)', () => rl.take(stateKey('bench', 'empty'), empty, clock())],
  ['rate limit tokens', () => rl.tokens(key, roomy, clock())],
  [
    'digest observe (p99, window 512)',
    (() => {
      let i = 0;
      return () => dd.observe(key, digest, samples[i++ & 4095], clock());
    })(),
  ],
  ['digest read', () => dd.read(key, digest, clock())],
];

async function sequential(op) {
  for (let i = 0; i < WARMUP; i++) await op();
  const times = new Float64Array(SEQUENTIAL);
  for (let i = 0; i < SEQUENTIAL; i++) {
    const t = performance.now();
    await op();
    times[i] = performance.now() - t;
  }
  times.sort();
  const mean = times.reduce((a, b) => a + b, 0) / times.length;
  return { p50: times[times.length >> 1], p99: times[Math.floor(times.length * 0.99)], mean };
}

async function throughput(op) {
  let done = 0;
  const until = performance.now() + THROUGHPUT_MS;
  const started = performance.now();
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

async function memoryUsage() {
  // a breaker with a full window, a half-open breaker with 3 leases, a bucket, and a digest mid-epoch
  const full = stateKey('bench-memory', 'closed');
  for (let t = 0; t < 10_000; t += 100) {
    const a = await cb.acquire(full, breaker, t);
    await cb.record(full, breaker, a, 'success', t);
  }
  const half = stateKey('bench-memory', 'half-open');
  const fast = { ...tripping, breakDuration: 1, halfOpenMaxCalls: 3 };
  for (let i = 0; i < 10; i++) await cb.record(half, fast, await cb.acquire(half, fast, 0), 'failure', 0);
  await new Promise((r) => setTimeout(r, 5));
  for (let i = 0; i < 3; i++) await cb.acquire(half, { ...fast, breakDuration: 60_000 }, 0);
  const bucket = stateKey('bench-memory', 'bucket');
  await rl.take(bucket, { permits: 100, per: 1000, burst: 100 }, 0);
  const dg = stateKey('bench-memory', 'digest');
  for (let i = 0; i < 511; i++) await dd.observe(dg, digest, samples[i], 0);
  const base = (k) => `${prefix}:{${k.id}}`;
  const rows = [
    ['breaker state, closed, full window (`…:cb`)', `${base(full)}:cb`],
    ['breaker state, half-open (`…:cb`)', `${base(half)}:cb`],
    ['probe leases, 3 held (`…:cbl`)', `${base(half)}:cbl`],
    ['token bucket (`…:rl`)', `${base(bucket)}:rl`],
    ['digest meta (`…:dd:<q>`)', `${base(dg)}:dd:${digest.quantile}`],
    ['digest buckets, 511 samples (`…:dd:<q>:b`)', `${base(dg)}:dd:${digest.quantile}:b`],
  ];
  const out = [];
  const bytesOf = {};
  for (const [label, name] of rows) {
    const [bytes, fields, encoding] = await Promise.all([
      redis.memory('USAGE', name),
      redis.hlen(name),
      redis.object('ENCODING', name),
    ]);
    bytesOf[name] = Number(bytes);
    out.push(`| ${label} | ${bytes} | ${fields} | ${encoding} |`);
  }
  // one (policy, route) with a closed breaker, a bucket and one digest quantile
  const typical = [rows[0], rows[3], rows[4], rows[5]].reduce((sum, [, name]) => sum + bytesOf[name], 0);
  return { rows: out, typical };
}

async function cleanup() {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== '0');
}

async function main() {
  const where = machine();
  const info = await redis.info('server');
  const version = /redis_version:(\S+)/.exec(info)?.[1] ?? '?';
  // trip the "open" key once so its acquires are rejections
  for (let i = 0; i < 10; i++)
    await cb.record(openKey, tripping, await cb.acquire(openKey, tripping, 0), 'failure', 0);
  const rows = [];
  for (const [name, op] of operations) {
    const s = await sequential(op);
    const ops = await throughput(op);
    const us = (ms) => (ms * 1000).toFixed(0);
    rows.push(
      `| ${name} | ${us(s.p50)} | ${us(s.p99)} | ${us(s.mean)} | ${Math.round(ops).toLocaleString('en-US')} |`,
    );
    console.log(rows.at(-1));
  }
  const memory = await memoryUsage();
  await cleanup();
  redis.disconnect();
  writeSection(
    'redis',
    `## Redis stores (@ballast/redis)

Each operation is one EVALSHA of the store's Lua script (server clock) over one ioredis 6.0.0 connection to the
local Redis over loopback; the cached row is answered in-process without a round trip (SPEC §11.16, off by default).

- Latency: ${SEQUENTIAL} sequential calls (one in flight) after ${WARMUP} warm-up calls.
- Throughput: ${CONCURRENCY} calls in flight for ${THROUGHPUT_MS / 1000} s on the same connection.
- Machine: ${where}; Redis ${version}. Measured ${new Date().toISOString().slice(0, 10)}.

| operation | p50 µs | p99 µs | mean µs | ops/s (${CONCURRENCY} in flight) |
|---|---:|---:|---:|---:|
${rows.join('\n')}

Memory per key (\`MEMORY USAGE\`, bytes, including Redis's per-key overhead):

| key | bytes | fields | encoding |
|---|---:|---:|---|
${memory.rows.join('\n')}

A (policy, route) with a closed breaker, a rate limit and one digest quantile mid-epoch holds about
${(memory.typical / 1024).toFixed(1)} KiB in Redis (the digest's bucket hash dominates; it is emptied every \`window\` samples), and
every key expires when idle (\`keyTtl\`, default 1 h).

Rerun alone: \`npx nx run-many -t build -p @ballast/redis && node tools/bench/src/redis-stores.bench.mjs\`. The
machine is shared and noisy: compare rows measured together, not across runs.`,
  );
}

main().catch(async (error) => {
  console.error(error);
  await cleanup().catch(() => {});
  redis.disconnect();
  process.exitCode = 1;
});
