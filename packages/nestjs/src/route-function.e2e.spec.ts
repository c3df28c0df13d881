import 'reflect-metadata';
import {
  Controller,
  Get,
  Headers,
  Logger,
  Param,
  ServiceUnavailableException,
  Sse,
  type ExecutionContext,
  type INestApplication,
  type MessageEvent,
} from '@nestjs/common';
import {
  CircuitBreakerStrategy,
  RateLimitStrategy,
  Resilience,
  ResiliencePolicy,
  type ResilienceEvent,
} from '@ballast/core';
import { FakeClock } from '@ballast/testing';
import { of, type Observable } from 'rxjs';
import request from 'supertest';
import { ADAPTERS, bootApp } from './__tests__/harness';
import { Hedged, ResilienceModule, Resilient, type ResilientCall, type RouteFunction } from './index';

/** The tenant of an HTTP call, from its `x-tenant` header; none (the policy-wide key) without one. */
const tenantOf: RouteFunction = ({ request }) => {
  const tenant = request?.headers['x-tenant'];
  return typeof tenant === 'string' ? tenant : undefined;
};

/** What the route functions were asked, and how often each handler ran. */
const seen: { calls: ResilientCall[]; runs: Map<string, number> } = { calls: [], runs: new Map() };
const ran = (name: string): void => void seen.runs.set(name, (seen.runs.get(name) ?? 0) + 1);

/** A route function that records the call it is asked about, then answers like {@link tenantOf}. */
const recordingTenantOf: RouteFunction = (call) => {
  seen.calls.push(call);
  return tenantOf(call);
};

/** Route functions with a bug: what a value taken from a request without a check can turn out to be. */
const badRoutes: Record<string, (call: ResilientCall) => unknown> = {
  throws: () => {
    throw new Error('no tenant table');
  },
  number: () => 42,
  object: () => ({ tenant: 'a' }),
};

@Controller('orders')
class OrdersController {
  failing = new Set<string>();

  @Get()
  @Resilient('tenant-breaker', { route: recordingTenantOf })
  list(@Headers('x-tenant') tenant: string | undefined): { ok: true } {
    ran('list');
    if (tenant !== undefined && this.failing.has(tenant))
      throw new ServiceUnavailableException('backend down');
    return { ok: true };
  }

  @Get('by/:tenant')
  @Hedged('tenant-limit', { route: ({ request }) => (request?.['params'] as { tenant: string }).tenant })
  byParam(@Param('tenant') tenant: string): { tenant: string } {
    ran('byParam');
    return { tenant };
  }

  @Get('empty')
  @Resilient('tenant-limit', { route: () => '' })
  empty(): { ok: true } {
    return { ok: true };
  }

  @Sse('stream')
  @Resilient('tenant-breaker', { route: tenantOf })
  stream(): Observable<MessageEvent> {
    ran('stream');
    return of({ data: 'tick' });
  }
}

@Controller('bad')
class BadRoutesController {
  @Get(':kind')
  @Resilient('tenant-limit', { route: (call) => badRoutes[kindOf(call)]!(call) as string })
  bad(@Param('kind') kind: string): { kind: string } {
    ran(`bad:${kind}`);
    return { kind };
  }
}

function kindOf(call: ResilientCall): string {
  return (call.request!['params'] as { kind: string }).kind;
}

function policies(): ResiliencePolicy[] {
  return [
    new ResiliencePolicy({
      name: 'tenant-breaker',
      strategies: [
        new CircuitBreakerStrategy({
          failureRatio: 0.5,
          samplingWindow: '10s',
          minThroughput: 2,
          breakDuration: '5s',
        }),
      ],
    }),
    new ResiliencePolicy({
      name: 'tenant-limit',
      strategies: [new RateLimitStrategy({ permits: 1, per: '1m' })],
    }),
  ];
}

describe.each(ADAPTERS)('@Resilient with a route function of the call (%s)', (adapter) => {
  const clock = new FakeClock();
  let app: INestApplication;
  let resilience: Resilience;
  let events: ResilienceEvent[];
  const http = () => request(app.getHttpServer());

  beforeEach(async () => {
    seen.calls = [];
    seen.runs = new Map();
    app = await bootApp(adapter, {
      imports: [ResilienceModule.forRoot({ policies: policies(), clock, maxKeysPerPolicy: 8 })],
      controllers: [OrdersController, BadRoutesController],
    });
    resilience = app.get(Resilience);
    events = [];
    resilience.on((e) => events.push(e));
  });
  afterEach(async () => {
    await app.close();
  });

  const routes = async (policy: string) =>
    (await resilience.admin.inspect({ policy })).map((s) => s.route ?? null).sort();

  it("keeps a breaker per tenant from a header: tenant A's open circuit does not refuse tenant B", async () => {
    app.get(OrdersController).failing.add('a');
    await http().get('/orders').set('x-tenant', 'a').expect(503);
    await http().get('/orders').set('x-tenant', 'a').expect(503);
    const open = await http().get('/orders').set('x-tenant', 'a').expect(503);
    expect(open.body).toMatchObject({ code: 'circuit_open' });
    expect(seen.runs.get('list')).toBe(2); // the open breaker did not run the handler
    await http().get('/orders').set('x-tenant', 'b').expect(200, { ok: true });
    await http().get('/orders').set('x-tenant', 'b').expect(200, { ok: true });
    const state = await resilience.admin.inspect({ policy: 'tenant-breaker' });
    expect(state.map((s) => [s.route, s.breaker?.state]).sort()).toEqual([
      ['a', 'open'],
      ['b', 'closed'],
    ]);
    // no header: the route function answers undefined, which is the policy's default key
    await http().get('/orders').expect(200);
    expect(await routes('tenant-breaker')).toEqual(['a', 'b', null]);
    expect(events.filter((e) => e.type === 'call').map((e) => e.route)).toEqual([
      'a',
      'a',
      'a',
      'b',
      'b',
      undefined,
    ]);
  });

  it("asks the route function with Nest's arguments, the request and the ExecutionContext", async () => {
    await http().get('/orders').set('x-tenant', 'a').expect(200);
    expect(seen.calls).toHaveLength(1);
    const [call] = seen.calls as [ResilientCall];
    const context = call.context as ExecutionContext;
    expect(context.getType()).toBe('http');
    expect(context.getClass()).toBe(OrdersController);
    expect(context.getHandler().name).toBe('list');
    expect(call.request).toBe(context.getArgByIndex(0));
    expect(call.args).toEqual(context.getArgs());
    expect(call.request?.headers['x-tenant']).toBe('a');
  });

  it('keys @Hedged handlers too, here by a path parameter read from the request', async () => {
    await http().get('/orders/by/acme').expect(200, { tenant: 'acme' });
    await http().get('/orders/by/acme').expect(429); // one permit per minute, per tenant
    await http().get('/orders/by/globex').expect(200, { tenant: 'globex' });
    expect(await routes('tenant-limit')).toEqual(['acme', 'globex']);
    expect(seen.runs.get('byParam')).toBe(2);
  });

  it("keys an empty string like any other route (as core does a fixed route: ''), apart from no route", async () => {
    await http().get('/orders/empty').expect(200);
    await http().get('/orders/empty').expect(429);
    expect(await routes('tenant-limit')).toEqual(['']);
  });

  it('keys @Sse() streams by the route function too', async () => {
    await http().get('/orders/stream').set('x-tenant', 'c').expect(200);
    expect(seen.runs.get('stream')).toBe(1);
    expect(await routes('tenant-breaker')).toEqual(['c']);
  });

  it('keeps the number of keys bounded by maxKeysPerPolicy, whatever the number of tenants', async () => {
    for (let i = 0; i < 80; i++) await http().get('/orders').set('x-tenant', `tenant-${i}`).expect(200);
    expect(seen.runs.get('list')).toBe(80);
    const state = await resilience.admin.inspect({ policy: 'tenant-breaker' });
    expect(state.length).toBeLessThanOrEqual(8);
    expect(state.map((s) => s.route)).toContain('tenant-79'); // the latest tenants are the ones kept
  });

  describe('a route function that throws or answers no route', () => {
    let logged: jest.SpiedFunction<Logger['error']>;
    beforeEach(() => {
      logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    });
    afterEach(() => logged.mockRestore());

    it.each([
      [
        'throws',
        "@Resilient('tenant-limit') on BadRoutesController.bad: options.route threw Error: no tenant table",
      ],
      [
        'number',
        "@Resilient('tenant-limit') on BadRoutesController.bad: options.route answered 42; expected a string or undefined",
      ],
      [
        'object',
        "@Resilient('tenant-limit') on BadRoutesController.bad: options.route answered { tenant: 'a' }; expected a string or undefined",
      ],
    ])('%s: answers 500, never runs the handler, and holds no state', async (kind, message) => {
      await http().get(`/bad/${kind}`).expect(500, { statusCode: 500, message: 'Internal server error' });
      expect(seen.runs.get(`bad:${kind}`)).toBeUndefined();
      expect(await routes('tenant-limit')).toEqual([]); // no key, no permit taken
      expect(events).toEqual([]); // the call never reached the policy
      expect(logged).toHaveBeenCalledTimes(1);
      expect(logged.mock.calls[0]![0]).toMatchObject({
        name: 'ResilienceError',
        kind: 'internal',
        code: 'callback_failed',
        policy: 'tenant-limit',
        message,
      });
    });
  });
});
