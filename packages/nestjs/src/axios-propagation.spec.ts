import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import axios from 'axios';
import { Criticality, bindCriticality, installAxiosPropagation, withDeadline } from '@ballast/core';
import { FakeClock } from '@ballast/testing';

/** Core's installAxiosPropagation on a real axios instance against a real HTTP server (SPEC §14.4). */
describe('installAxiosPropagation', () => {
  let server: Server;
  let base: string;
  const seen: IncomingMessage[] = [];
  const closed: string[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(req);
      req.on('close', () => closed.push(req.url!));
      if (req.url === '/hang') return;
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  const last = (url: string) => seen.filter((r) => r.url === url).pop()!;

  it('sends the budget and the criticality; a header the caller set wins; nothing outside a scope', async () => {
    const client = axios.create();
    const uninstall = installAxiosPropagation(client);
    const clock = new FakeClock();
    await withDeadline(
      1200,
      () =>
        bindCriticality(Criticality.CRITICAL, () =>
          client.get(`${base}/one`, { headers: { 'X-Criticality': 'degraded' } }),
        ),
      clock,
    );
    expect(last('/one').headers['x-deadline-budget-ms']).toBe('1200');
    expect(last('/one').headers['x-criticality']).toBe('degraded');
    await client.get(`${base}/two`);
    expect(last('/two').headers['x-deadline-budget-ms']).toBeUndefined();
    expect(last('/two').headers['x-criticality']).toBeUndefined();
    expect(clock.pendingTimers()).toBe(0);
    uninstall();
    await withDeadline(500, () => client.get(`${base}/three`), clock);
    expect(last('/three').headers['x-deadline-budget-ms']).toBeUndefined();
  });

  it('the ambient deadline aborts a request the server never answers; its timer is gone once it ends', async () => {
    const client = axios.create();
    installAxiosPropagation(client, { deadline: 'x-budget' });
    const clock = new FakeClock();
    const p = withDeadline(250, () => client.get(`${base}/hang`), clock);
    const failed = expect(p).rejects.toBeDefined();
    while (!seen.some((r) => r.url === '/hang')) await new Promise((r) => setImmediate(r));
    expect(last('/hang').headers['x-budget']).toBe('250');
    await clock.advance(250);
    await failed;
    while (!closed.includes('/hang')) await new Promise((r) => setImmediate(r));
    expect(clock.pendingTimers()).toBe(0);
  });

  it('a request made once the deadline has passed is not sent', async () => {
    const client = axios.create();
    installAxiosPropagation(client);
    const before = seen.length;
    await expect(withDeadline(0, () => client.get(`${base}/late`))).rejects.toMatchObject({
      code: 'deadline_exceeded',
    });
    expect(seen.length).toBe(before);
  });

  it('installs once per instance, and refuses what is not an axios instance', () => {
    const client = axios.create();
    expect(installAxiosPropagation(client)).toBe(installAxiosPropagation(client));
    expect(() => installAxiosPropagation({} as never)).toThrow(
      'Invalid installAxiosPropagation() call: axios must be an axios instance (with interceptors), got {}',
    );
  });
});
