import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Resilience } from '../resilience';
import { classifyHttpResponse } from '../errors/classify-result';
import { FallbackStrategy } from '../strategies/fallback-strategy';
import { RetryStrategy } from '../strategies/retry-strategy';
import { policyFromSpec, policyToSpec } from '../policy/policy-spec';
import { settle, setup } from './helpers';
import { breaker, policy } from './kit';

/** classifyResult (SPEC §14.3): results with a verdict are failures for every strategy; run resolves with the last. */

const response = (status: number, headers: Record<string, string> = {}) =>
  new Response(null, { status, headers });

describe('classifyResult', () => {
  it('classifyHttpResponse: 429 with Retry-After (seconds or HTTP date), 408 and 5xx; others healthy', () => {
    expect(classifyHttpResponse(response(429, { 'retry-after': '3' }))).toEqual({
      kind: 'throttled',
      retryAfter: 3000,
    });
    const date = new Date(Date.now() + 60_000).toUTCString();
    const dated = classifyHttpResponse(response(429, { 'retry-after': date }));
    expect(dated?.kind).toBe('throttled');
    expect(dated?.retryAfter).toBeGreaterThan(50_000);
    expect(classifyHttpResponse(response(429))).toEqual({ kind: 'throttled' });
    expect(classifyHttpResponse(response(408))).toEqual({ kind: 'infrastructure' });
    expect(classifyHttpResponse(response(503))).toEqual({ kind: 'infrastructure' });
    for (const s of [200, 204, 301, 400, 404, 409]) expect(classifyHttpResponse(response(s))).toBeUndefined();
    expect(classifyHttpResponse('text')).toBeUndefined();
  });

  it('retry retries a classified result, honouring its retryAfter; run resolves with the last result', async () => {
    const { resilience, clock, ofType } = setup([
      policy(
        'p',
        [
          new RetryStrategy({
            maxAttempts: 3,
            retryOn: ['throttled', 'infrastructure'],
            backoff: { base: 10, max: 5000, jitter: 'none' },
          }),
        ],
        {
          classifyResult: 'http',
        },
      ),
    ]);
    const answers = [response(429, { 'retry-after': '2' }), response(503), response(503)];
    const at: number[] = [];
    const s = settle(
      resilience.run(
        (ctx) => {
          at.push(clock.now());
          return Promise.resolve(answers[ctx.attempt - 1]!);
        },
        { policy: 'p' },
      ),
    );
    await clock.advance(10_000);
    expect(at).toEqual([0, 2000, 2020]);
    expect(s.value).toBe(answers[2]);
    expect(ofType('call')).toEqual([expect.objectContaining({ outcome: 'failure', code: 'infrastructure' })]);
  });

  it('a classified result feeds the fallback’s on; a classifier that throws fails the call with internal', async () => {
    const { resilience, clock } = setup([
      policy('fb', [], {
        classifyResult: 'http',
        fallback: new FallbackStrategy({ fallback: () => 'cached', on: ['infrastructure'] }),
      }),
      policy('bad', [new RetryStrategy({ maxAttempts: 3 })], {
        classifyResult: () => {
          throw new Error('bug');
        },
      }),
      policy('odd', [], { classifyResult: () => ({ kind: 'nonsense' }) as never }),
    ]);
    const fb = settle(resilience.run(() => response(500), { policy: 'fb' }));
    const ok = settle(resilience.run(() => response(200), { policy: 'fb' }));
    let calls = 0;
    const bad = settle(resilience.run(() => (calls++, 'x'), { policy: 'bad' }));
    const odd = settle(resilience.run(() => 'x', { policy: 'odd' }));
    await clock.advance(0);
    expect(fb.value).toBe('cached');
    expect((ok.value as Response).status).toBe(200);
    expect(bad.error).toMatchObject({ kind: 'internal', code: 'callback_failed' });
    expect(calls).toBe(1);
    expect(odd.error).toMatchObject({ kind: 'internal', code: 'callback_failed' });
  });

  it('the JSON spec names a registered classifier; unknown names and functions are violations', () => {
    const p = policyFromSpec({ name: 'p', strategies: [], classifyResult: 'http' });
    expect(p.classifyResult).toBe(classifyHttpResponse);
    expect(policyToSpec(p)).toMatchObject({ classifyResult: 'http' });
    expect(policyFromSpec(JSON.parse(JSON.stringify(policyToSpec(p))))).toEqual(p);
    expect(() => policyFromSpec({ name: 'p', strategies: [], classifyResult: 'grpc' })).toThrow(
      /classifyResult must be the name of a registered result classifier \(http; a function has no JSON form\), got 'grpc'/,
    );
    expect(policyToSpec(policy('p', [], { classifyResult: () => undefined }))).not.toHaveProperty(
      'classifyResult',
    );
  });

  describe('against a real local HTTP server', () => {
    let server: Server;
    let url: string;
    let served = 0;
    beforeAll(async () => {
      server = createServer((_req, res) => {
        served++;
        res.statusCode = 503;
        res.end('down');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('a breaker trips on classified fetch responses; callers read the 503s until it opens', async () => {
      const resilience = new Resilience({
        policies: [
          policy('api', [breaker({ minThroughput: 3, failureRatio: 0.5 })], { classifyResult: 'http' }),
        ],
      });
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await resilience.run(
          async (ctx) => {
            const res = await fetch(url, { signal: ctx.signal });
            await res.text();
            return res;
          },
          { policy: 'api' },
        );
        statuses.push(r.status);
      }
      expect(statuses).toEqual([503, 503, 503]);
      await expect(resilience.run(() => fetch(url), { policy: 'api' })).rejects.toMatchObject({
        code: 'circuit_open',
      });
      expect(served).toBe(3);
      expect((await resilience.admin.inspect({ policy: 'api' }))[0]).toMatchObject({
        breaker: { state: 'open', calls: 3 },
      });
    });
  });
});
