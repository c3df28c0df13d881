import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request as undiciRequest } from 'undici';
import { FakeClock } from '@ballast/testing';
import { bindCriticality, Criticality } from './criticality';
import { withDeadline } from './deadline';
import { undiciPropagation } from './propagation-integrations';

/** A real loopback server: `/ok` answers, `/hang` never does (only the client's abort ends it). */
describe('propagation integrations against a real node:http server', () => {
  let server: Server;
  let url: string;
  const seen: IncomingHttpHeaders[] = [];
  let closed = 0;

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(req.headers);
      if (req.url === '/hang') {
        req.on('close', () => closed++);
        return;
      }
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const reached = async (count: number) => {
    while (seen.length < count) await new Promise((r) => setImmediate(r));
  };
  const closedAtLeast = async (count: number) => {
    while (closed < count) await new Promise((r) => setImmediate(r));
  };

  describe('undici interceptor', () => {
    let agent: Agent;
    beforeAll(() => {
      agent = new Agent();
    });
    afterAll(async () => {
      await agent.close();
    });

    it('sends budget and criticality; a header the request set wins; no timer is left', async () => {
      const clock = new FakeClock();
      const dispatcher = agent.compose(undiciPropagation());
      const body = await withDeadline(
        700,
        () =>
          bindCriticality(Criticality.DEGRADED, async () => {
            const res = await undiciRequest(`${url}/ok`, {
              dispatcher,
              headers: { 'x-criticality': 'critical' },
            });
            return res.body.text();
          }),
        clock,
      );
      expect(body).toBe('ok');
      expect(seen.at(-1)).toMatchObject({ 'x-deadline-budget-ms': '700', 'x-criticality': 'critical' });
      expect(clock.pendingTimers()).toBe(0);
    });

    it('aborts the request when the ambient deadline ends', async () => {
      const clock = new FakeClock();
      const dispatcher = agent.compose(undiciPropagation());
      const before = seen.length;
      const closedBefore = closed;
      const outcome = withDeadline(30, () => undiciRequest(`${url}/hang`, { dispatcher }), clock).catch(
        (e: unknown) => e,
      );
      await reached(before + 1);
      await clock.advance(30);
      expect(await outcome).toMatchObject({ code: 'deadline_exceeded' });
      await closedAtLeast(closedBefore + 1);
      expect(clock.pendingTimers()).toBe(0);
    });

    it('passes a request outside any scope through without headers', async () => {
      const dispatcher = agent.compose(undiciPropagation());
      const res = await undiciRequest(`${url}/ok`, { dispatcher });
      await res.body.text();
      expect(seen.at(-1)).not.toHaveProperty('x-deadline-budget-ms');
      expect(seen.at(-1)).not.toHaveProperty('x-criticality');
    });
  });
});
