// The edge of the load-and-fault run, a child process of the harness (driven over IPC):
// - a load balancer in front of the demo replicas (round robin over those in rotation, keep-alive to each). It is
//   where every answer is judged (status and the body's `code`), one report per second to the harness; an error
//   on its way to a replica (reset, refused, hang-up) is answered 599 and reported as a socket error;
// - a TCP proxy between the replicas and Redis that can add latency, blackhole (hold every byte, then deliver it
//   all on heal) or drop (reset every connection and refuse new ones until healed).
// Canary faults of its own, to prove the harness sees them: `hang` (one request never answered), `reset` (one client
// socket reset mid-request), `close` (one closed mid-request, no reset), `bare-500` (one replica's answer replaced by a 500 without a code).
import http from 'node:http';
import net from 'node:net';

let replicas = []; // [{ name, port, agent, inFlight }]
let rotation = [];
let turn = 0;
let t0 = Date.now();
/** The harness's id of the last `zero` (0 before it): every report carries it, so none is counted against another. */
let epoch = 0;
let canaries = new Set();
const hung = []; // the hung requests of the `hang` canary
let second = newSecond();

function newSecond() {
  return { epoch, at: Math.floor((Date.now() - t0) / 1000), endpoints: {} };
}

function record(endpoint, outcome, ms, detail) {
  const at = Math.floor((Date.now() - t0) / 1000);
  if (at !== second.at) flush(at);
  const e = (second.endpoints[endpoint] ??= { outcomes: {}, latencies: [], unexpected: [] });
  e.outcomes[outcome] = (e.outcomes[outcome] ?? 0) + 1;
  e.latencies.push(Math.round(ms * 10) / 10);
  if (detail !== undefined && e.unexpected.length < 5) e.unexpected.push(detail);
}

function flush(at = Math.floor((Date.now() - t0) / 1000)) {
  if (Object.keys(second.endpoints).length > 0 || second.retries) process.send({ kind: 'second', ...second });
  second = { epoch, at, endpoints: {} };
}
setInterval(() => flush(), 250).unref();

const endpointOf = (url) => (url === '/products' ? 'list' : url.startsWith('/products/') ? 'sku' : 'other');

/** An answer's outcome: `ok`, a Ballast refusal by code, `backend-502`, or `unexpected` (with what it was). */
function judge(status, body, refusals) {
  if (status >= 200 && status < 300) return { outcome: 'ok' };
  let parsed;
  try {
    parsed = JSON.parse(body);
  } catch {
    parsed = undefined;
  }
  const code = parsed?.code;
  if ([429, 503, 504].includes(status) && refusals.includes(code)) return { outcome: code };
  if (status === 502 && /^Inventory backend (error|overloaded)$/.test(parsed?.message ?? ''))
    return { outcome: 'backend-502' };
  return { outcome: 'unexpected', detail: `${status} ${body.slice(0, 160)}` };
}

function balancer(refusals) {
  return http.createServer((req, res) => {
    const started = performance.now();
    const endpoint = endpointOf(req.url);
    if (canaries.delete('hang')) return void hung.push(res);
    if (canaries.delete('reset')) return void req.socket.resetAndDestroy();
    if (canaries.delete('close')) return void req.socket.destroy();
    const bare500 = canaries.delete('bare-500');
    const send = (retry) => {
      const r = rotation[turn++ % rotation.length];
      r.inFlight++;
      const upstream = http.request(
        {
          port: r.port,
          host: '127.0.0.1',
          path: req.url,
          method: req.method,
          headers: req.headers,
          agent: r.agent,
        },
        (up) => {
          const chunks = [];
          up.on('data', (c) => chunks.push(c));
          up.on('end', () => {
            r.inFlight--;
            const status = bare500 ? 500 : up.statusCode;
            const body = bare500 ? Buffer.from('injected') : Buffer.concat(chunks);
            const { outcome, detail } = judge(status, body.toString('utf8'), refusals);
            record(endpoint, outcome, performance.now() - started, detail && `${r.name}: ${detail}`);
            res.writeHead(status, { 'content-type': up.headers['content-type'] ?? 'text/plain' });
            res.end(body);
          });
        },
      );
      upstream.on('error', (error) => {
        r.inFlight--;
        // Node's keep-alive race: the replica closed an idle pooled socket just as this request was written on it.
        // The request never reached the replica, so the balancer sends it again, once (counted and reported).
        if (retry && upstream.reusedSocket && error.code === 'ECONNRESET') {
          second.retries = (second.retries ?? 0) + 1;
          return send(false);
        }
        record(
          endpoint,
          'unexpected',
          performance.now() - started,
          `${r.name}: socket ${error.code ?? error.message}`,
        );
        if (!res.headersSent) res.writeHead(599, { 'x-soak-upstream-error': String(error.code) });
        res.end();
      });
      upstream.end();
    };
    req.resume();
    req.on('end', () => send(true));
  });
}

// The Redis proxy: one pair of sockets per connection; `mode` applies to every pair, old and new.
let mode = { kind: 'pass' };
const pairs = new Set();

/** One direction of a pair: an ordered queue, so a chunk delayed by `latency` is never overtaken by a later one. */
function forward(from, to) {
  const queue = [];
  let timer;
  const drain = () => {
    timer = undefined;
    if (mode.kind === 'blackhole') return;
    const now = performance.now();
    while (queue.length > 0 && queue[0].due <= now) {
      const { chunk } = queue.shift();
      if (to.writable) to.write(chunk);
    }
    if (queue.length > 0) timer = setTimeout(drain, queue[0].due - now);
  };
  from.on('data', (chunk) => {
    queue.push({ due: performance.now() + (mode.kind === 'latency' ? mode.ms : 0), chunk });
    if (timer === undefined) drain();
  });
  return () => timer === undefined && drain();
}

function redisProxy(redisPort) {
  return net.createServer((client) => {
    if (mode.kind === 'drop') return void client.resetAndDestroy();
    const server = net.connect(redisPort, '127.0.0.1');
    const pair = { client, server };
    pair.release = [forward(client, server), forward(server, client)];
    pairs.add(pair);
    const close = () => {
      pairs.delete(pair);
      client.destroy();
      server.destroy();
    };
    for (const s of [client, server]) s.on('error', close).on('close', close);
  });
}

function setMode(next) {
  const was = mode;
  mode = next;
  if (next.kind === 'drop') for (const p of pairs) (p.client.resetAndDestroy(), p.server.destroy());
  if (was.kind === 'blackhole' && next.kind !== 'blackhole')
    for (const p of pairs) for (const release of p.release) release();
}

const ops = {
  async start({ replicas: list, redisPort, refusals, lbPort, proxyPort }) {
    replicas = list.map((r) => ({ ...r, agent: newAgent(), inFlight: 0 }));
    rotation = [...replicas];
    await listen(balancer(refusals), lbPort);
    await listen(redisProxy(redisPort), proxyPort);
    return { lbPort, proxyPort };
  },
  /** Seconds count from now, under the harness's `epoch`; what was not reported yet is dropped. */
  zero({ epoch: next }) {
    t0 = Date.now();
    epoch = next;
    second = newSecond();
    return t0;
  },
  /** Reports the current second now: its report reaches the harness before this answer (one ordered channel). */
  flush() {
    flush();
    return epoch;
  },
  rotation({ names }) {
    rotation = replicas.filter((r) => names.includes(r.name));
    return rotation.map((r) => r.name);
  },
  inFlight({ name }) {
    return replicas.find((r) => r.name === name).inFlight;
  },
  /** A replica restarted: its old keep-alive sockets are gone, start a fresh pool. */
  renew({ name }) {
    const r = replicas.find((x) => x.name === name);
    r.agent.destroy();
    r.agent = newAgent();
  },
  proxy({ kind, ms }) {
    setMode({ kind, ms });
    return kind;
  },
  canary({ names }) {
    canaries = new Set(names);
    return names;
  },
  release() {
    for (const res of hung.splice(0)) res.destroy();
  },
};

const newAgent = () => new http.Agent({ keepAlive: true, maxSockets: 256 });
const listen = (server, port) => new Promise((r) => server.listen(port, '127.0.0.1', r));

process.on('message', async (m) => {
  const value = await ops[m.op](m);
  process.send({ reply: m.id, value });
});
process.on('disconnect', () => process.exit(0));
