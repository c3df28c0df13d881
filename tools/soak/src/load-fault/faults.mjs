// The faults of the load-and-fault run and their seeded schedule. Each `inject` runs the fault to its heal and
// returns what it did; the time of the heal is taken by the caller when it returns.
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A small seeded generator (mulberry32): the same seed gives the same schedule. */
export function seeded(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const between = (random, lo, hi) => lo + Math.floor(random() * (hi - lo + 1));

/** kind → { what it does (for the report), params(random), inject(ctx, params) }. */
export const FAULTS = {
  'redis-kill': {
    what: 'redis-server killed with SIGKILL (`kill -9`), started again after N s on the same port and data',
    params: (random) => ({ seconds: between(random, 3, 8) }),
    async inject({ redis }, { seconds }) {
      await redis.kill9();
      await sleep(seconds * 1000);
      await redis.start();
    },
  },
  'redis-latency': {
    what: 'the proxy delays every chunk by 100 ms each way (+200 ms per Redis round trip) for N s',
    params: (random) => ({ seconds: between(random, 5, 10), ms: 100 }),
    async inject({ edge }, { seconds, ms }) {
      await edge.send({ op: 'proxy', kind: 'latency', ms });
      await sleep(seconds * 1000);
      await edge.send({ op: 'proxy', kind: 'pass' });
    },
  },
  'redis-blackhole': {
    what: 'the proxy holds every byte both ways for N s (connections stay open, nothing answers), then delivers them',
    params: (random) => ({ seconds: between(random, 3, 8) }),
    async inject({ edge }, { seconds }) {
      await edge.send({ op: 'proxy', kind: 'blackhole' });
      await sleep(seconds * 1000);
      await edge.send({ op: 'proxy', kind: 'pass' });
    },
  },
  'redis-drop': {
    what: 'the proxy resets every Redis connection and resets each new one for N s',
    params: (random) => ({ seconds: between(random, 3, 8) }),
    async inject({ edge }, { seconds }) {
      await edge.send({ op: 'proxy', kind: 'drop' });
      await sleep(seconds * 1000);
      await edge.send({ op: 'proxy', kind: 'pass' });
    },
  },
  'replica-restart': {
    what: 'replica B taken out of the balancer, its in-flight requests drained, SIGTERM, started again, put back',
    params: () => ({}),
    async inject({ edge, replicas, prepare }) {
      const b = replicas[1];
      await edge.send({ op: 'rotation', names: [replicas[0].name] });
      for (let i = 0; i < 100 && (await edge.send({ op: 'inFlight', name: b.name })) > 0; i++)
        await sleep(50);
      const exit = await b.stop();
      await edge.send({ op: 'renew', name: b.name });
      await b.start();
      await prepare(b);
      await edge.send({ op: 'rotation', names: replicas.map((r) => r.name) });
      return { exit };
    },
  },
  'backend-outage': {
    what: "both replicas' inventory backends fail every call for N s (the fleet's breaker must open, then close)",
    params: (random) => ({ seconds: between(random, 5, 10) }),
    async inject({ replicas, backend }, { seconds }) {
      await Promise.all(replicas.map((r) => backend(r, { failureRate: 1 })));
      await sleep(seconds * 1000);
      await Promise.all(replicas.map((r) => backend(r, { failureRate: 0 })));
    },
  },
};

/** Every kind once in a seeded order, then seeded picks: `next()` gives the next fault. */
export function schedule(seed) {
  const random = seeded(seed);
  const kinds = Object.keys(FAULTS);
  const first = kinds
    .map((k) => [random(), k])
    .sort((a, b) => a[0] - b[0])
    .map(([, k]) => k);
  let i = 0;
  return {
    next() {
      const kind = i < first.length ? first[i] : kinds[Math.floor(random() * kinds.length)];
      i++;
      return { kind, params: FAULTS[kind].params(random), round: i };
    },
    /** Whether every kind has run once. */
    get covered() {
      return i >= first.length;
    },
  };
}
