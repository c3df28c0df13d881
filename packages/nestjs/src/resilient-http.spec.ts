import 'reflect-metadata';
import { Controller, Get, type INestApplication } from '@nestjs/common';
import {
  RateLimitStrategy,
  Resilience,
  ResilienceError,
  ResiliencePolicy,
  type RateLimitStore,
  type ResilienceEvent,
} from '@ballast/core';
import { FakeClock } from '@ballast/testing';
import request from 'supertest';
import { ADAPTERS, bootApp, eventually, pump, start } from './__tests__/harness';
import { Probe, httpTestModule } from './__tests__/fixtures';
import { Resilient, ResilienceModule } from './index';

describe.each(ADAPTERS)('@Resilient over HTTP (%s)', (adapter) => {
  let clock: FakeClock;
  let app: INestApplication;
  let probe: Probe;
  let resilience: Resilience;
  let events: ResilienceEvent[];
  const http = () => request(app.getHttpServer());

  beforeEach(async () => {
    clock = new FakeClock();
    app = await bootApp(
      adapter,
      httpTestModule(clock, { headers: { deadline: 'X-Deadline-Budget-Ms', criticality: 'x-criticality' } }),
    );
    probe = app.get(Probe);
    resilience = app.get(Resilience);
    events = [];
    resilience.on((e) => events.push(e));
  });
  afterEach(async () => {
    await app.close();
  });

  const calls = () =>
    events.filter((e) => e.type === 'call').map((e) => ({ policy: e.policy, route: e.route }));

  describe('decorators', () => {
    it('runs a decorated handler under its policy and leaves undecorated ones alone', async () => {
      await http().get('/m/limited').expect(200, { ok: true });
      await http().get('/m/undecorated').expect(200, { ok: true });
      expect(calls()).toEqual([{ policy: 'limited', route: undefined }]);
    });

    it('applies a class-level decorator to every handler, and the method decorator wins', async () => {
      await http().get('/c/inherits').expect(200);
      await http().get('/c/overrides').expect(200);
      expect(calls()).toEqual([
        { policy: 'limited', route: 'class' },
        { policy: 'plain', route: undefined },
      ]);
    });

    it('keeps separate state per route and shares it without one', async () => {
      await http().get('/m/route-a').expect(200);
      await http().get('/m/route-a').expect(200);
      await http().get('/m/route-a').expect(429);
      await http().get('/m/route-b').expect(200, { route: 'b' });
      // policy-wide state (no route) is yet another key
      await http().get('/m/limited').expect(200);
      const state = await resilience.admin.inspect({ policy: 'limited' });
      expect(state.map((s) => s.route).sort()).toEqual(['a', 'b', undefined].sort());
    });
  });

  describe('error mapping', () => {
    it('maps rate_limited to 429 with Retry-After in whole seconds and a body without policy names', async () => {
      await http().get('/m/limited').expect(200);
      await http().get('/m/limited').expect(200);
      const res = await http().get('/m/limited').expect(429);
      expect(res.headers['retry-after']).toBe('30'); // 2 permits per minute: the next token in 30 s
      expect(res.body).toEqual({
        statusCode: 429,
        error: 'Too Many Requests',
        code: 'rate_limited',
        message: expect.any(String),
      });
      expect(res.body.message).not.toMatch(/limited|policy|route|at /i);
    });

    it('passes handler errors through unchanged, then maps circuit_open to 503 once the breaker trips', async () => {
      const own = await http().get('/m/flaky').expect(503);
      expect(own.body).toEqual({ statusCode: 503, message: 'backend down', error: 'Service Unavailable' });
      await http().get('/m/flaky').expect(503);
      const open = await http().get('/m/flaky').expect(503);
      expect(open.body).toMatchObject({
        statusCode: 503,
        error: 'Service Unavailable',
        code: 'circuit_open',
      });
      expect(Number(open.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(probe.hits.get('flaky')).toBe(2); // the open breaker did not call the handler

      probe.failing = false;
      await clock.advance(5000); // break duration: half-open, the next call is the probe
      await http().get('/m/flaky').expect(200, { ok: true });
      await http().get('/m/flaky').expect(200);
    });

    it('keeps a handler HttpException status (404 is healthy for the breaker)', async () => {
      for (let i = 0; i < 3; i++) {
        const res = await http().get('/m/missing').expect(404);
        expect(res.body).toEqual({ statusCode: 404, message: 'no such product', error: 'Not Found' });
      }
      const [state] = await resilience.admin.inspect({ policy: 'guarded' });
      expect(state?.breaker?.state).toBe('closed');
    });

    it('maps attempt_timeout to 504 and aborts the handler signal', async () => {
      const res = start(http().get('/m/slow'));
      await probe.entered.promise;
      await clock.advance(1000);
      const answer = await res;
      expect(answer.status).toBe(504);
      expect(answer.body).toMatchObject({
        statusCode: 504,
        error: 'Gateway Timeout',
        code: 'attempt_timeout',
      });
      expect(probe.signals[0]?.aborted).toBe(true);
    });

    it('maps bulkhead_full to 503', async () => {
      const first = start(http().get('/m/narrow'));
      await probe.entered.promise;
      const res = await http().get('/m/narrow').expect(503);
      expect(res.body).toMatchObject({ code: 'bulkhead_full', error: 'Service Unavailable' });
      probe.release.resolve();
      expect((await first).status).toBe(200);
      expect(probe.hits.get('narrow')).toBe(1);
    });

    it('maps bulkhead_queue_shed to 503 when a queued request waited past its allowance', async () => {
      const first = start(http().get('/m/queued'));
      await probe.entered.promise;
      const second = start(http().get('/m/queued'));
      await eventually(async () => (await resilience.admin.inspect({ policy: 'queued' }))[0]?.waiting === 1);
      await clock.advance(250);
      probe.release.resolve();
      expect((await first).status).toBe(200);
      const shed = await second;
      expect(shed.status).toBe(503);
      expect(shed.body).toMatchObject({ code: 'bulkhead_queue_shed' });
    });

    it('maps resilience_forced_open to 503 without calling the handler', async () => {
      await resilience.admin.forceOpen('guarded');
      const res = await http().get('/m/flaky').expect(503);
      expect(res.body).toMatchObject({ code: 'resilience_forced_open' });
      expect(probe.hits.get('flaky')).toBeUndefined();
    });
  });

  describe('re-invocation', () => {
    it('retries by re-invoking the handler', async () => {
      const res = await pump(clock, start(http().get('/m/retry')));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ attempts: 3 });
      expect(events.filter((e) => e.type === 'retry')).toHaveLength(2);
    });

    it('supports observable handlers, re-subscribing them on retry', async () => {
      const res = await pump(clock, start(http().get('/m/observable')));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ attempts: 2 });
    });

    it('@Hedged races a second attempt after the hedge delay and aborts the loser', async () => {
      const res = start(http().get('/m/hedged'));
      await probe.entered.promise;
      await clock.advance(100);
      const answer = await res;
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ attempt: 2 });
      expect(probe.signals[0]?.aborted).toBe(true);
      expect(probe.signals[1]?.aborted).toBe(false);
    });

    it('@Resilient on a hedging policy does not hedge (handlers may not be idempotent)', async () => {
      const res = start(http().get('/m/not-hedged'));
      await probe.entered.promise;
      await clock.advance(100);
      await clock.advance(400);
      expect((await res).body).toEqual({ attempt: 1 });
      expect(probe.hits.get('not-hedged')).toBe(1);
    });
  });

  describe('headers', () => {
    it('binds the criticality of the decorator, overridden by the header', async () => {
      await http().get('/m/context').expect(200, { criticality: 3, remaining: null });
      await http()
        .get('/m/context')
        .set('x-criticality', 'best_effort')
        .expect(200, { criticality: 0, remaining: null });
      await http()
        .get('/m/context')
        .set('x-criticality', 'nonsense')
        .expect(200, { criticality: 3, remaining: null });
    });

    it('binds the deadline budget header on the Resilience clock', async () => {
      await http()
        .get('/m/context')
        .set('x-deadline-budget-ms', '250')
        .expect(200, { criticality: 3, remaining: 250 });
      await http()
        .get('/m/context')
        .set('x-deadline-budget-ms', 'soon')
        .expect(200, { criticality: 3, remaining: null });
    });

    it('binds headers for undecorated handlers too, so their own calls see them', async () => {
      await http()
        .get('/m/context-undecorated')
        .set('x-criticality', 'CRITICAL')
        .set('x-deadline-budget-ms', '40')
        .expect(200, { criticality: 3, remaining: 40 });
      await http().get('/m/context-undecorated').expect(200, { criticality: 2, remaining: null });
    });

    it('maps deadline_exceeded to 504 when the budget runs out', async () => {
      const res = start(http().get('/m/deadline').set('x-deadline-budget-ms', '100'));
      await probe.entered.promise;
      await clock.advance(100);
      const answer = await res;
      expect(answer.status).toBe(504);
      expect(answer.body).toMatchObject({ code: 'deadline_exceeded', error: 'Gateway Timeout' });
      expect(probe.signals[0]?.aborted).toBe(true);
    });

    it('rejects at once when the budget is already spent', async () => {
      const res = await http().get('/m/deadline').set('x-deadline-budget-ms', '0').expect(504);
      expect(res.body).toMatchObject({ code: 'deadline_exceeded' });
    });
  });
});

describe.each(ADAPTERS)('headers are opt-in (%s)', (adapter) => {
  it('ignores deadline and criticality headers unless named', async () => {
    const clock = new FakeClock();
    const app = await bootApp(adapter, httpTestModule(clock));
    try {
      await request(app.getHttpServer())
        .get('/m/context')
        .set('x-criticality', 'best_effort')
        .set('x-deadline-budget-ms', '10')
        .expect(200, { criticality: 3, remaining: null });
    } finally {
      await app.close();
    }
  });
});

@Controller('s')
class StoreController {
  @Get('strict')
  @Resilient('strict')
  strict(): { ok: true } {
    return { ok: true };
  }

  @Get('misused')
  misused(): never {
    throw new ResilienceError({ kind: 'not_found', message: 'thrown by user code' });
  }
}

describe.each(ADAPTERS)('store failures and unmapped errors (%s)', (adapter) => {
  const failingStore: RateLimitStore = {
    take: () => {
      throw new Error('redis is down');
    },
    tokens: () => {
      throw new Error('redis is down');
    },
    reset: () => {},
  };

  it('maps resilience_store_unavailable to 503 when the policy does not fail open', async () => {
    const app = await bootApp(adapter, {
      imports: [
        ResilienceModule.forRoot({
          stores: { rateLimit: failingStore },
          policies: [
            new ResiliencePolicy({
              name: 'strict',
              strategies: [new RateLimitStrategy({ permits: 10, per: '1s' })],
              failOpenOnStoreError: false,
            }),
          ],
        }),
      ],
      controllers: [StoreController],
    });
    try {
      const res = await request(app.getHttpServer()).get('/s/strict').expect(503);
      expect(res.body).toMatchObject({ code: 'resilience_store_unavailable', error: 'Service Unavailable' });
      expect(res.body.message).not.toContain('redis');
      // a ResilienceError Ballast did not raise as a rejection is not mapped: Nest's usual 500
      await request(app.getHttpServer())
        .get('/s/misused')
        .expect(500, { statusCode: 500, message: 'Internal server error' });
    } finally {
      await app.close();
    }
  });
});
