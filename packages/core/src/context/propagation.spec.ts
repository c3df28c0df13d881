import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FakeClock } from '@ballast/testing';
import { ResilienceError } from '../errors/resilience-error';
import { bindCriticality, Criticality } from './criticality';
import { withDeadline } from './deadline';
import { propagationHeaders, withPropagation } from './propagation';
import { setup } from '../__tests__/helpers';
import { policy } from '../__tests__/kit';
import { TimeoutStrategy } from '../strategies/timeout-strategy';

/** A fetch that records what it was given and answers when told (or never). */
function recordingFetch() {
  const calls: { input: unknown; init: RequestInit | undefined }[] = [];
  let answer: ((r: Response) => void) | undefined;
  const fetchImpl = ((input: unknown, init?: RequestInit) => {
    calls.push({ input, init });
    return new Promise<Response>((resolve, reject) => {
      answer = resolve;
      init?.signal?.addEventListener('abort', () => reject(init.signal!.reason));
    });
  }) as typeof fetch;
  return { calls, fetchImpl, answer: (r = new Response('ok')) => answer!(r) };
}

describe('propagationHeaders', () => {
  it('is empty outside any deadline or criticality scope', () => {
    expect(propagationHeaders()).toEqual({});
  });

  it('carries the remaining budget in whole ms (rounded down) and the criticality’s lowercase name', () => {
    const clock = new FakeClock(1000);
    withDeadline(
      800,
      () => {
        clock.now = () => 1000 + 250.7; // 549.3 ms left
        expect(propagationHeaders()).toEqual({ 'x-deadline-budget-ms': '549' });
        bindCriticality(Criticality.BEST_EFFORT, () =>
          expect(propagationHeaders()).toEqual({
            'x-deadline-budget-ms': '549',
            'x-criticality': 'best_effort',
          }),
        );
      },
      clock,
    );
    for (const [level, name] of [
      [Criticality.DEGRADED, 'degraded'],
      [Criticality.NORMAL, 'normal'],
      [Criticality.CRITICAL, 'critical'],
    ] as const)
      bindCriticality(level, () => expect(propagationHeaders()).toEqual({ 'x-criticality': name }));
  });

  it('never sends a negative budget: 0 once the deadline has passed', () => {
    const clock = new FakeClock();
    withDeadline(
      100,
      () => {
        clock.now = () => 5000;
        expect(propagationHeaders()).toEqual({ 'x-deadline-budget-ms': '0' });
      },
      clock,
    );
  });

  it('uses the configured names (lowercased) and refuses ones that are no header name, naming each', () => {
    const clock = new FakeClock();
    withDeadline(
      100,
      () =>
        expect(propagationHeaders({ deadline: 'X-Budget', criticality: 'x-prio' })).toEqual({
          'x-budget': '100',
        }),
      clock,
    );
    expect(() => propagationHeaders({ deadline: 'bad name', criticality: '' })).toThrow(
      "Invalid propagation header names: names.deadline must be an HTTP header name, got 'bad name'; names.criticality must be an HTTP header name, got ''",
    );
  });
});

describe('withPropagation', () => {
  it('adds the headers; a header the caller set wins', async () => {
    const clock = new FakeClock();
    const f = recordingFetch();
    const fetchP = withPropagation(f.fetchImpl);
    const p = withDeadline(
      300,
      () =>
        bindCriticality(Criticality.CRITICAL, () =>
          fetchP('http://next/a', { headers: { 'x-criticality': 'degraded', accept: 'text/plain' } }),
        ),
      clock,
    );
    const headers = new Headers(f.calls[0]!.init!.headers);
    expect(headers.get('x-deadline-budget-ms')).toBe('300');
    expect(headers.get('x-criticality')).toBe('degraded');
    expect(headers.get('accept')).toBe('text/plain');
    f.answer();
    await expect(p).resolves.toBeInstanceOf(Response);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('aborts the request when the ambient deadline passes, with timeout / deadline_exceeded; no timer left', async () => {
    const clock = new FakeClock();
    const f = recordingFetch();
    const fetchP = withPropagation(f.fetchImpl);
    const p = withDeadline(300, () => fetchP('http://next/slow'), clock);
    const failed = expect(p).rejects.toMatchObject({ kind: 'timeout', code: 'deadline_exceeded' });
    await clock.advance(299);
    expect(f.calls[0]!.init!.signal!.aborted).toBe(false);
    await clock.advance(1);
    await failed;
    expect(clock.pendingTimers()).toBe(0);
  });

  it('does not send a request once the deadline has passed', async () => {
    const clock = new FakeClock();
    const f = recordingFetch();
    const p = withDeadline(0, () => withPropagation(f.fetchImpl)('http://next/late'), clock);
    await expect(p).rejects.toBeInstanceOf(ResilienceError);
    expect(f.calls).toHaveLength(0);
  });

  it('aborts the request when the ambient call is aborted (its timeout), and with the caller’s own signal', async () => {
    const { resilience, clock } = setup([policy('p', [new TimeoutStrategy({ timeout: 50 })])]);
    const f = recordingFetch();
    const fetchP = withPropagation(f.fetchImpl);
    const call = resilience.run(() => fetchP('http://next/x'), { policy: 'p' });
    const failed = expect(call).rejects.toMatchObject({ code: 'attempt_timeout' });
    await clock.advance(50);
    await failed;
    expect(f.calls[0]!.init!.signal!.aborted).toBe(true);

    const mine = new AbortController();
    const own = fetchP('http://next/y', { signal: mine.signal });
    mine.abort(new Error('mine'));
    await expect(own).rejects.toThrow('mine');
  });

  it('outside any scope it is the plain fetch: no header, the caller’s signal untouched', async () => {
    const f = recordingFetch();
    const ac = new AbortController();
    const p = withPropagation(f.fetchImpl)('http://next/plain', { signal: ac.signal });
    expect([...new Headers(f.calls[0]!.init!.headers).keys()]).toEqual([]);
    expect(f.calls[0]!.init!.signal).toBe(ac.signal);
    f.answer();
    await p;
  });

  it('refuses something that is not a fetch', () => {
    expect(() => withPropagation(42 as never)).toThrow(
      'Invalid withPropagation() call: fetchImpl must be a fetch function, got 42',
    );
  });
});

describe('withPropagation against a real HTTP server', () => {
  let server: Server;
  let base: string;
  const seen: IncomingMessage[] = [];
  const closed: string[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(req);
      req.on('close', () => closed.push(req.url!));
      if (req.url === '/hang') return; // never answers: only the client's abort ends it
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('the server receives the budget and the criticality', async () => {
    const clock = new FakeClock();
    const fetchP = withPropagation();
    const res = await withDeadline(
      1500,
      () => bindCriticality(Criticality.DEGRADED, () => fetchP(`${base}/ok`)),
      clock,
    );
    expect(await res.text()).toBe('ok');
    const req = seen.find((r) => r.url === '/ok')!;
    expect(req.headers['x-deadline-budget-ms']).toBe('1500');
    expect(req.headers['x-criticality']).toBe('degraded');
  });

  it('the deadline ends a request the server never answers: the connection closes on the server side', async () => {
    const clock = new FakeClock();
    const fetchP = withPropagation();
    const p = withDeadline(100, () => fetchP(`${base}/hang`), clock);
    const failed = expect(p).rejects.toMatchObject({ code: 'deadline_exceeded' });
    while (!seen.some((r) => r.url === '/hang')) await new Promise((r) => setImmediate(r));
    await clock.advance(100);
    await failed;
    while (!closed.includes('/hang')) await new Promise((r) => setImmediate(r));
    expect(closed).toContain('/hang');
  });
});
