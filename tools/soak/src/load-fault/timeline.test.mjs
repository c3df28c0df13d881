// The load-fault timeline counts the load's answers only (`node --test`, part of the soak project's `test` target).
// The run measures capacity through the same edge before it zeroes it; those answers (every one accepted, the rate
// limit retuned out of the way) were merged into the load's first seconds and read as a 7× fleet rate limit
// overshoot during the replica restart of RELIABILITY.md's first load-fault run.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import http from 'node:http';
import { after, describe, it } from 'node:test';
import { freePort, startEdge, teardown } from './fleet.mjs';
import { recordTimeline } from './timeline.mjs';

after(teardown);

/** A replica stand-in: 200 on every request, as the demo answers an admitted `GET /products`. */
async function replica() {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('[]');
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  after(() => server.close());
  return server.address().port;
}

const agent = new http.Agent({ keepAlive: true });
after(() => agent.destroy());

function get(port, path) {
  return new Promise((resolve, reject) => {
    const req = http.get({ port, host: '127.0.0.1', path, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', reject);
  });
}

async function getTimes(port, n) {
  for (let i = 0; i < n; i++) assert.equal(await get(port, '/products'), 200);
}

/** `/products` answered 200, over every second of the timeline. */
const accepted = (timeline) =>
  [...timeline.values()].reduce((n, s) => n + (s.endpoints.list?.outcomes.ok ?? 0), 0);
const TIMEOUT = { timeout: 30_000 };

describe('load-fault timeline', () => {
  it(
    "counts the answers given after the edge's zero, not the capacity run's before it",
    TIMEOUT,
    async () => {
      const [redisPort, proxyPort, lbPort] = await Promise.all([freePort(), freePort(), freePort()]);
      const port = await replica();
      const edge = await startEdge({
        replicas: [{ name: 'A', port }],
        redisPort,
        proxyPort,
        lbPort,
        refusals: [],
      });
      const { timeline, zero } = recordTimeline(edge);
      await getTimes(lbPort, 7); // the capacity run
      await edge.send({ op: 'flush' }); // its report is in before the answer
      await zero();
      await getTimes(lbPort, 3); // the load
      await edge.send({ op: 'flush' });
      assert.equal(accepted(timeline), 3);
    },
  );

  it('drops a report of an earlier epoch that arrives after the zero', TIMEOUT, async () => {
    const edge = new EventEmitter();
    edge.send = async (command) => (edge.last = command) && 1000;
    const { timeline, zero } = recordTimeline(edge);
    const report = (epoch, ok) => ({
      epoch,
      at: 0,
      endpoints: { list: { outcomes: { ok }, latencies: [], unexpected: [] } },
    });
    edge.emit('second', report(0, 5)); // before any zero: the edge's own start
    await zero();
    const first = edge.last.epoch;
    edge.emit('second', report(first, 2));
    await zero();
    edge.emit('second', report(first, 9)); // late, from the previous epoch
    edge.emit('second', report(edge.last.epoch, 4));
    assert.equal(accepted(timeline), 4);
  });
});
