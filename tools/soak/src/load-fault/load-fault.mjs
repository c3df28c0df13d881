// The load-and-fault run (`npm run soak -- --only=load-fault`): two replicas of the demo (apps/demo/dist) on one
// redis-server of the run's own, reached through a TCP proxy, behind a load balancer (edge.mjs), under autocannon
// at twice the capacity measured first, while a seeded schedule kills and restarts Redis, slows, blackholes and
// drops its connections, restarts a replica and fails the backend. Then canaries: the same checks against faults
// they must report. Returns everything RELIABILITY.md's load-fault section shows (lib/report-load-fault.mjs).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import autocannon from 'autocannon';
import { core } from '../lib/ballast.mjs';
import { FAULTS, schedule } from './faults.mjs';
import { DEMO_MAIN, RedisServer, Replica, freePort, startEdge, teardown } from './fleet.mjs';
import { recordTimeline } from './timeline.mjs';
import {
  BOUNDS,
  convergence,
  failures,
  heapGrowth,
  heapProblems,
  p99,
  total,
  windowOf,
} from './verdicts.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const PATHS = ['/products', '/products/anchor-01'];
/** Ballast's own refusals: an answer with one of these codes is an answer, not a failure. */
const REFUSALS = Object.entries(core.ErrorCode)
  .filter(([k]) => !['UNKNOWN_POLICY', 'INVALID_POLICY', 'VERSION_CONFLICT', 'CALLBACK_FAILED'].includes(k))
  .map(([, v]) => v);
const CAPACITY_CONNECTIONS = 24;
const SETTLE_SECONDS = 8; // between a fault's convergence and the next fault: the next one's "before" window

export async function runLoadFault({ seed, minutes, say }) {
  if (!fs.existsSync(DEMO_MAIN)) throw new Error(`${DEMO_MAIN} is missing: run \`npm run build:demo\` first`);
  const deadline = Date.now() + minutes * 60_000;
  const token = randomBytes(12).toString('hex');
  const [redisPort, proxyPort, lbPort, portA, portB] = await Promise.all(Array.from({ length: 5 }, freePort));
  const heap = new Map(); // 'A#1' → [{ at (s since that process started), bytes }]
  const started = new Map();
  const onHeap = (r, generation, bytes) => {
    const key = `${r.name}#${generation}`;
    if (!started.has(key)) started.set(key, Date.now() - 5000);
    const list = heap.get(key) ?? [];
    list.push({ at: (Date.now() - started.get(key)) / 1000, bytes, t: Date.now() });
    heap.set(key, list);
  };
  const env = { ADMIN_TOKEN: token, REDIS_URL: `redis://127.0.0.1:${proxyPort}` };
  const replicas = [
    new Replica({ name: 'A', port: portA, env, onHeap }),
    new Replica({ name: 'B', port: portB, env, onHeap }),
  ];
  const redis = new RedisServer(redisPort);
  try {
    await redis.start();
    const edge = await startEdge({
      replicas: replicas.map((r) => ({ name: r.name, port: r.port })),
      redisPort,
      proxyPort,
      lbPort,
      refusals: REFUSALS,
    });
    await Promise.all(replicas.map((r) => r.start()));
    // The load's answers only, from its zero: the capacity run's are not the fleet's under the limit.
    const { timeline, zero } = recordTimeline(edge);
    const api = adminApi(token);
    const prepare = (r) => api(r, 'PUT', '/backend', { capacity: 100_000 });
    await Promise.all(replicas.map(prepare));
    say(
      `load-fault: redis :${redisPort} via proxy :${proxyPort}, replicas :${portA} :${portB}, balancer :${lbPort}`,
    );

    // Capacity: closed-loop autocannon through the balancer, the fleet at its default policies but a rate limit
    // that never refuses (so every request does the full work of its route), after a warm-up.
    const url = `http://127.0.0.1:${lbPort}`;
    await retune(api, replicas, { type: 'rateLimit', permits: 1_000_000, per: '1s' });
    await cannon({ url, connections: CAPACITY_CONNECTIONS, duration: 3 });
    const cap = await cannon({ url, connections: CAPACITY_CONNECTIONS, duration: 10 });
    const capacity = Math.round(cap.requests.average);
    if (cap.errors > 0 || capacity < 20)
      throw new Error(`capacity run: ${cap.errors} errors, ${capacity} req/s`);
    const rate = Math.max(20, Math.round(capacity / 100) * 10); // a tenth of capacity, the fleet's accepted rate
    await retune(api, replicas, { type: 'rateLimit', permits: rate, per: '1s' });
    say(
      `load-fault: capacity ${capacity} req/s (${CAPACITY_CONNECTIONS} connections); load at ${2 * capacity} req/s; fleet rate limit ${rate}/s`,
    );

    // The load, and its client-side errors (a timeout is a hang).
    const t0 = await zero();
    const clientErrors = [];
    const load = cannon(
      {
        url,
        connections: 2 * CAPACITY_CONNECTIONS,
        overallRate: 2 * capacity,
        duration: 3600,
        setupClient: closedMidRequest(clientErrors),
      },
      (instance) => {
        instance.on('reqError', (e) =>
          clientErrors.push({ at: Date.now(), code: e.code, message: e.message }),
        );
        instance.on('response', (_client, status) => {
          if (!(status < 300 || [429, 502, 503, 504].includes(status)))
            clientErrors.push({ at: Date.now(), code: `status ${status}`, message: `status ${status}` });
        });
      },
    );
    const now = () => (Date.now() - t0) / 1000;
    const states = [];
    const pollStates = async () => {
      const at = now();
      const inRotation = await Promise.all(replicas.map((r) => breakerState(api, r)));
      states.push({ at, closed: inRotation.every((s) => s === 'closed'), states: inRotation });
    };
    const poller = setInterval(() => void pollStates().catch(() => undefined), 1000);

    const waitConverged = async (healAt, seconds) => {
      const until = healAt + seconds;
      while (now() < until + 1) {
        await sleep(1000);
        const c = convergence(timeline, healAt, Math.floor(now()) - 1, { rate, states });
        if (c.rate !== undefined && c.breaker !== undefined) return c;
      }
      return convergence(timeline, healAt, Math.floor(now()) - 1, { rate, states });
    };

    await sleep(15_000); // warm-up under load: the first "before" window
    const faults = [];
    const plan = schedule(seed);
    const ctx = { edge, redis, replicas, prepare, backend: (r, knobs) => api(r, 'PUT', '/backend', knobs) };
    const canaryTime = 75_000;
    while (!plan.covered || Date.now() + 45_000 + canaryTime < deadline) {
      const { kind, params, round } = plan.next();
      const at = now();
      say(`load-fault: ${round}. ${kind} ${JSON.stringify(params)} at ${at.toFixed(1)} s`);
      const detail = await FAULTS[kind].inject(ctx, params);
      const healAt = now();
      const c = await waitConverged(healAt, BOUNDS.convergeSeconds);
      const end = healAt + Math.max(c.rate ?? BOUNDS.convergeSeconds, c.breaker ?? BOUNDS.convergeSeconds);
      await sleep(SETTLE_SECONDS * 1000);
      const during = windowOf(timeline, at, healAt);
      faults.push({
        kind,
        params: { ...params, ...detail },
        at,
        healAt,
        rateS: c.rate,
        breakerS: c.breaker,
        p99Before: p99(timeline, at - 10, at),
        p99During: p99(timeline, at, healAt),
        p99After: p99(timeline, end, end + SETTLE_SECONDS),
        answers: total(during.list) + total(during.sku),
        acceptedDuring: (during.list?.outcomes.ok ?? 0) / Math.max(1, healAt - at),
        codes: {
          ...during.list?.outcomes,
          ...Object.fromEntries(Object.entries(during.sku?.outcomes ?? {}).map(([k, v]) => [`sku ${k}`, v])),
        },
        failures: failures(timeline, clientErrors, at, end + SETTLE_SECONDS, t0),
      });
      const f = faults.at(-1);
      say(
        `  healed after ${(healAt - at).toFixed(1)} s; converged: rate limit ${fmtS(f.rateS)}, breaker ${fmtS(f.breakerS)}; p99 ${ms(f.p99Before)} → ${ms(f.p99During)} → ${ms(f.p99After)}; ${f.failures.length} failure(s)`,
      );
      for (const x of f.failures.slice(0, 3)) say(`    ✗ ${x}`);
    }
    const mainEnd = Math.floor(now()); // whole seconds: the canaries start in the next one
    await sleep(1000);
    const mainHeap = new Map([...heap].map(([k, v]) => [k, [...v]]));

    // Canaries, in the same fleet under the same load: each check against a fault it must report.
    const canaries = await runCanaries({
      edge,
      api,
      replicas,
      timeline,
      clientErrors,
      t0,
      now,
      heap,
      rate,
      waitConverged,
    });
    clearInterval(poller);
    const overall = await load.stop();

    const problems = [
      ...replicas.flatMap((r) => r.exits),
      ...failures(timeline, clientErrors, 0, mainEnd, t0),
      ...faults.flatMap((f) => [
        ...(f.rateS === undefined
          ? [
              `${f.kind} at ${f.at.toFixed(0)} s: the rate limit did not converge within ${BOUNDS.convergeSeconds} s`,
            ]
          : []),
        ...(f.breakerS === undefined
          ? [
              `${f.kind} at ${f.at.toFixed(0)} s: the breaker did not converge within ${BOUNDS.convergeSeconds} s`,
            ]
          : []),
      ]),
      ...[...mainHeap].flatMap(([k, v]) => heapProblems(`replica ${k}`, v)),
      ...canaries.filter((c) => c.caught === undefined).map((c) => `canary ${c.inject} was not caught`),
    ];
    const whole = windowOf(timeline, 0, mainEnd);
    return {
      seed,
      minutes,
      capacity,
      capacityP99: cap.latency.p99,
      rate,
      connections: 2 * CAPACITY_CONNECTIONS,
      seconds: mainEnd,
      answers: Object.fromEntries(Object.entries(whole).map(([k, e]) => [k, e.outcomes])),
      achieved: (total(whole.list) + total(whole.sku)) / mainEnd,
      retries: [...timeline].filter(([at]) => at < mainEnd).reduce((a, [, x]) => a + (x.retries ?? 0), 0),
      p99: p99(timeline, 0, mainEnd),
      clientP99: overall.latency.p99,
      faults,
      heap: [...mainHeap].map(([k, v]) => ({ replica: k, ...heapGrowth(v), span: v.at(-1)?.at ?? 0 })),
      warnings: replicas.flatMap((r) => r.warnings),
      canaries,
      problems,
    };
  } finally {
    teardown();
  }
}

async function runCanaries({
  edge,
  api,
  replicas,
  timeline,
  clientErrors,
  t0,
  now,
  heap,
  rate,
  waitConverged,
}) {
  const out = [];
  // One window: a hung request, a reset socket, a bare 500 at the edge, and a leak in replica A.
  const from = now();
  const leakKey = [...heap.keys()].filter((k) => k.startsWith('A#')).at(-1);
  await edge.send({ op: 'canary', names: ['hang', 'reset', 'close', 'bare-500'] });
  replicas[0].tell({ leak: true });
  await sleep((BOUNDS.hangSeconds + 6) * 1000);
  replicas[0].tell({ leak: false });
  await edge.send({ op: 'release' });
  const to = now();
  const found = failures(timeline, clientErrors, from, to + 1, t0);
  out.push({
    inject: 'hang (the balancer never answers one request)',
    caught: found.find((p) => p.startsWith('hang')),
  });
  out.push({
    inject: 'reset (the balancer resets one client socket mid-request)',
    caught: found.find((p) => p.includes('ECONNRESET')),
  });
  out.push({
    inject:
      'close (the balancer closes one client socket mid-request, no reset: autocannon would resend silently)',
    caught: found.find((p) => p.includes('request unanswered')),
  });
  out.push({
    inject: "bare-500 (one replica's answer replaced by a 500 without a code)",
    caught: found.find((p) => p.includes('unexpected answer')),
  });
  const samples = (heap.get(leakKey) ?? []).filter(
    (x) => x.t >= t0 + from * 1000 - 5000 && x.t <= t0 + to * 1000 + 5000,
  );
  out.push({
    inject: 'leak (replica A retains 5 MiB/s for 16 s)',
    caught: heapProblems(`replica ${leakKey}`, samples, 0)[0],
  });
  await sleep(3000);
  // A fault left unhealed: the breaker forced open fleet-wide and Redis dropped; neither may look converged.
  await api(replicas[0], 'POST', '/resilience/policies/inventory/force-open', {});
  await edge.send({ op: 'proxy', kind: 'drop' });
  const c = await waitConverged(now(), 12);
  out.push({
    inject: 'unhealed redis-drop (the rate limit must not look converged)',
    caught:
      c.rate === undefined ? `the rate limit did not converge within 12 s (${rate}/s configured)` : undefined,
  });
  out.push({
    inject: 'stuck force-open of the breaker (it must not look converged)',
    caught: c.breaker === undefined ? 'the breaker did not converge within 12 s' : undefined,
  });
  await edge.send({ op: 'proxy', kind: 'pass' });
  // The clear is a fleet write: it answers 503 until ioredis has reconnected (its backoff is at most 2 s).
  for (let i = 0; ; i++) {
    const cleared = await api(replicas[0], 'DELETE', '/resilience/policies/inventory/force-open').then(
      () => true,
      (e) => e,
    );
    if (cleared === true) break;
    if (i === 30) throw cleared;
    await sleep(500);
  }
  return out;
}

function adminApi(token) {
  return async (replica, method, path, body) => {
    const res = await fetch(`http://127.0.0.1:${replica.port}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(5000),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path} on ${replica.name}: ${res.status} ${text.slice(0, 200)}`);
    return text ? JSON.parse(text) : undefined;
  };
}

async function breakerState(api, replica) {
  const r = await api(replica, 'GET', '/resilience/state?policy=inventory');
  const s = r.state.find((x) => x.policy === 'inventory' && x.route === null) ?? r.state[0];
  return s === undefined ? 'closed' : s.forcedOpen ? 'forced-open' : (s.breaker?.state ?? 'closed');
}

/** A fleet retune of `public-api` through replica A; B applies it on the push, or on its next 1 s reconcile. */
async function retune(api, replicas, strategy) {
  await api(replicas[0], 'PUT', '/resilience/policies/public-api', { strategies: [strategy] });
  await sleep(1500);
}

/**
 * autocannon reconnects silently when the server closes a connection, and sends its request again: a request lost
 * that way would go unseen. This hook (autocannon's `setupClient`) reports each connection ended by the other side
 * while a request on it was still unanswered.
 */
function closedMidRequest(clientErrors) {
  return (client) => {
    const connect = client._connect;
    client._connect = function () {
      connect.call(this);
      this.conn.prependListener('end', () => {
        if (!this.destroyed && this.pipelinedRequests.size() > 0)
          clientErrors.push({
            at: Date.now(),
            code: 'connection closed with a request unanswered',
            message: 'closed',
          });
      });
    };
  };
}

/** autocannon as a promise; `stop()` on the returned promise ends an open-ended run. */
function cannon(options, setup) {
  let instance;
  const p = new Promise((resolve, reject) => {
    instance = autocannon(
      { timeout: BOUNDS.hangSeconds, requests: PATHS.map((path) => ({ path })), ...options },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
    setup?.(instance);
  });
  p.stop = () => (instance.stop(), p);
  return p;
}

const fmtS = (s) => (s === undefined ? 'NOT within the bound' : `${s.toFixed(1)} s`);
const ms = (x) => (x === undefined ? '–' : `${x.toFixed(0)} ms`);
