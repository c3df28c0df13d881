import 'reflect-metadata';
import {
  Controller,
  Get,
  Injectable,
  ServiceUnavailableException,
  type CanActivate,
  type ExecutionContext,
  type INestApplication,
} from '@nestjs/common';
import {
  CircuitBreakerStrategy,
  RateLimitStrategy,
  Resilience,
  ResiliencePolicy,
  isResilienceError,
} from '@ballast/core';
import { FakeClock } from '@ballast/testing';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { ADAPTERS, bootApp } from '../__tests__/harness';
import { Resilient, ResilienceAdminModule, ResilienceModule, type ResilienceAdminOptions } from '../index';

@Injectable()
class TokenGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>();
    return req.headers['authorization'] === 'Bearer s3cret';
  }
}

@Controller('api')
class ApiController {
  failing = true;

  @Get('limited')
  @Resilient('limited')
  limited(): { ok: true } {
    return { ok: true };
  }

  @Get('eu')
  @Resilient('limited', { route: 'eu' })
  eu(): { ok: true } {
    return { ok: true };
  }

  @Get('flaky')
  @Resilient('guarded')
  flaky(): { ok: true } {
    if (this.failing) throw new ServiceUnavailableException();
    return { ok: true };
  }
}

function policies(): ResiliencePolicy[] {
  return [
    new ResiliencePolicy({ name: 'limited', strategies: [new RateLimitStrategy({ permits: 2, per: '1m' })] }),
    new ResiliencePolicy({
      name: 'guarded',
      strategies: [
        new CircuitBreakerStrategy({
          failureRatio: 0.5,
          samplingWindow: '10s',
          minThroughput: 2,
          breakDuration: '1m',
        }),
      ],
    }),
  ];
}

async function boot(
  adapter: (typeof ADAPTERS)[number],
  admin: ResilienceAdminOptions,
): Promise<INestApplication> {
  return bootApp(adapter, {
    imports: [
      ResilienceModule.forRoot({ policies: policies(), clock: new FakeClock() }),
      ResilienceAdminModule.forRoot(admin),
    ],
    controllers: [ApiController],
  });
}

describe('ResilienceAdminModule.forRoot', () => {
  it('refuses to start without a guard, saying why', () => {
    let error: unknown;
    try {
      ResilienceAdminModule.forRoot();
    } catch (e) {
      error = e;
    }
    expect(isResilienceError(error) && error.kind).toBe('configuration');
    expect((error as Error).message).toMatch(/without a guard/);
    expect((error as Error).message).toMatch(/unsafeAllowAnonymous: true/);
  });

  it('refuses malformed options, naming each field, its constraint and the value given', () => {
    const refusal = (options: unknown): string => {
      try {
        ResilienceAdminModule.forRoot(options as ResilienceAdminOptions);
      } catch (e) {
        expect(isResilienceError(e) && e.kind).toBe('configuration');
        return (e as Error).message;
      }
      throw new Error('forRoot accepted the options');
    };
    expect(refusal({ path: '', guard: 'TokenGuard', unsafeAllowAnonymous: 'yes', imports: {} })).toBe(
      'Invalid ResilienceAdminModule.forRoot options: ' +
        "path must be a URL path prefix of non-empty segments of letters, digits and . _ ~ - (like 'ops/resilience'), got ''; " +
        "guard must be a CanActivate class, got 'TokenGuard'; unsafeAllowAnonymous must be a boolean, got 'yes'; " +
        'imports must be an array of modules, got {}',
    );
    for (const path of [42, 'a?b', 'ops//state', 'a b', ':policy', '*'])
      expect(refusal({ path, guard: TokenGuard })).toMatch(
        /^Invalid ResilienceAdminModule.forRoot options: path must be/,
      );
    expect(refusal(null)).toMatch(/options must be an object, got null/);
    for (const path of ['ops', '/ops/resilience/', 'v1.admin', 'a-b_c~d'])
      expect(() => ResilienceAdminModule.forRoot({ path, guard: TokenGuard })).not.toThrow();
  });
});

describe.each(ADAPTERS)('admin HTTP API (%s)', (adapter) => {
  let app: INestApplication;
  const auth = { Authorization: 'Bearer s3cret' };
  const http = () => request(app.getHttpServer());

  beforeEach(async () => {
    app = await boot(adapter, { guard: TokenGuard });
  });
  afterEach(async () => {
    await app.close();
  });

  it('is protected by the guard', async () => {
    await http().get('/resilience/state').expect(403);
    await http().get('/resilience/state').set('Authorization', 'Bearer wrong').expect(403);
    await http().post('/resilience/policies/limited/force-open').expect(403);
    await http().get('/resilience/state').set(auth).expect(200);
  });

  it('GET /state lists policies and per-(policy, route) state, filtered by ?policy=', async () => {
    await http().get('/api/limited').expect(200);
    await http().get('/api/eu').expect(200);
    const res = await http().get('/resilience/state').set(auth).expect(200);
    expect(res.body.policies).toEqual(expect.arrayContaining(['limited', 'guarded', 'transient', 'occ']));
    expect(res.body.state).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ policy: 'limited', route: null, forcedOpen: false, rateLimitTokens: 1 }),
        expect.objectContaining({ policy: 'limited', route: 'eu', rateLimitTokens: 1 }),
      ]),
    );
    const filtered = await http().get('/resilience/state?policy=guarded').set(auth).expect(200);
    expect(filtered.body.state).toEqual([]);
    const unknown = await http().get('/resilience/state?policy=nope').set(auth).expect(404);
    expect(unknown.body).toMatchObject({ statusCode: 404, code: 'unknown_policy' });
  });

  it('force-opens a policy, then clears it', async () => {
    await http().post('/resilience/policies/limited/force-open').set(auth).expect(200, {
      policy: 'limited',
      route: null,
      forcedOpen: true,
    });
    const refused = await http().get('/api/limited').expect(503);
    expect(refused.body).toMatchObject({ code: 'resilience_forced_open' });
    await http().get('/api/eu').expect(503); // no route: every route, including new ones
    await http().delete('/resilience/policies/limited/force-open').set(auth).expect(200);
    await http().get('/api/limited').expect(200);
    await http().get('/api/eu').expect(200);
  });

  it('force-opens a single route (body) and clears it (query)', async () => {
    await http().post('/resilience/policies/limited/force-open').set(auth).send({ route: 'eu' }).expect(200, {
      policy: 'limited',
      route: 'eu',
      forcedOpen: true,
    });
    await http().get('/api/eu').expect(503);
    await http().get('/api/limited').expect(200);
    await http().delete('/resilience/policies/limited/force-open?route=eu').set(auth).expect(200);
    await http().get('/api/eu').expect(200);
  });

  it('rejects a non-string route with 400', async () => {
    const res = await http()
      .post('/resilience/policies/limited/force-open')
      .set(auth)
      .send({ route: 42 })
      .expect(400);
    expect(res.body).toMatchObject({
      code: 'invalid_request',
      message: 'Invalid admin request: route must be a non-empty string, got 42',
      violations: [{ path: 'route', constraint: 'a non-empty string', value: 42 }],
    });
  });

  it('resets a tripped breaker', async () => {
    await http().get('/api/flaky').expect(503);
    await http().get('/api/flaky').expect(503);
    const open = await http().get('/api/flaky').expect(503);
    expect(open.body).toMatchObject({ code: 'circuit_open' });
    app.get(ApiController).failing = false;
    await http().post('/resilience/policies/guarded/reset').set(auth).expect(200, {
      policy: 'guarded',
      route: null,
      reset: true,
    });
    await http().get('/api/flaky').expect(200);
  });

  it('answers 404 for unknown policies on every endpoint', async () => {
    for (const req of [
      http().post('/resilience/policies/nope/force-open'),
      http().delete('/resilience/policies/nope/force-open'),
      http().post('/resilience/policies/nope/reset'),
      http().put('/resilience/policies/nope').send({ strategies: [] }),
    ]) {
      const res = await req.set(auth).expect(404);
      expect(res.body).toEqual({
        statusCode: 404,
        error: 'Not Found',
        code: 'unknown_policy',
        message: "Unknown policy 'nope'",
      });
    }
  });

  it('PUT retunes a policy from its JSON spec, changing behaviour at once', async () => {
    await http().get('/api/eu').expect(200);
    await http().get('/api/eu').expect(200);
    await http().get('/api/eu').expect(429); // 2 per minute before the retune
    const res = await http()
      .put('/resilience/policies/limited')
      .set(auth)
      .send({ strategies: [{ type: 'rateLimit', permits: 5, per: '1m' }] })
      .expect(200);
    expect(res.body).toEqual({
      policy: 'limited',
      spec: expect.objectContaining({
        name: 'limited',
        strategies: [expect.objectContaining({ type: 'rateLimit', permits: 5 })],
      }),
    });
    for (let i = 0; i < 5; i++) await http().get('/api/limited').expect(200);
    await http().get('/api/limited').expect(429);
    expect(app.get(Resilience).policy('limited')?.rateLimit?.options.permits).toBe(5);
  });

  it('PUT answers 400 naming the JSON path of each violation, and changes nothing', async () => {
    const res = await http()
      .put('/resilience/policies/limited')
      .set(auth)
      .send({ strategies: [{ type: 'rateLimit', permits: 0, per: '1m' }] })
      .expect(400);
    expect(res.body).toMatchObject({ statusCode: 400, error: 'Bad Request', code: 'invalid_policy' });
    expect(res.body.message).toContain('strategies[0].permits');
    expect(res.body.violations).toEqual([{ path: 'strategies[0].permits', constraint: '≥ 1', value: 0 }]);
    expect(app.get(Resilience).policy('limited')?.rateLimit?.options.permits).toBe(2);
  });

  it('PUT refuses a spec naming another policy', async () => {
    const res = await http()
      .put('/resilience/policies/limited')
      .set(auth)
      .send({ name: 'guarded', strategies: [] })
      .expect(400);
    expect(res.body.message).toBe(
      "Invalid policy spec 'limited': name must be 'limited' (the policy in the URL), or absent, got 'guarded'",
    );
  });
});

describe.each(ADAPTERS)('admin HTTP API options (%s)', (adapter) => {
  it('serves a custom path without a guard when unsafeAllowAnonymous is set', async () => {
    const app = await boot(adapter, { path: 'ops/ballast', unsafeAllowAnonymous: true });
    try {
      const res = await request(app.getHttpServer()).get('/ops/ballast/state').expect(200);
      expect(res.body.policies).toContain('limited');
      await request(app.getHttpServer()).get('/resilience/state').expect(404);
    } finally {
      await app.close();
    }
  });
});

describe.each(ADAPTERS)('admin HTTP API: which route an operation targets (%s)', (adapter) => {
  let app: INestApplication;
  const auth = { Authorization: 'Bearer s3cret' };
  const http = () => request(app.getHttpServer());
  const forced = async (): Promise<{ policy: string; route: string | null }[]> => {
    const res = await http().get('/resilience/state').set(auth).expect(200);
    return (res.body.state as { policy: string; route: string | null; forcedOpen: boolean }[])
      .filter((s) => s.forcedOpen)
      .map(({ policy, route }) => ({ policy, route }));
  };

  beforeEach(async () => {
    app = await boot(adapter, { guard: TokenGuard });
  });
  afterEach(async () => {
    await app.close();
  });

  it('force-open takes the route from the query string, like DELETE does', async () => {
    await http().post('/resilience/policies/limited/force-open?route=eu').set(auth).expect(200, {
      policy: 'limited',
      route: 'eu',
      forcedOpen: true,
    });
    await http().get('/api/eu').expect(503);
    await http().get('/api/limited').expect(200); // the rest of the policy keeps serving
    expect(await forced()).toEqual([{ policy: 'limited', route: 'eu' }]);
  });

  it('reset takes the route from the body or the query string', async () => {
    await http().post('/resilience/policies/guarded/reset?route=eu').set(auth).expect(200, {
      policy: 'guarded',
      route: 'eu',
      reset: true,
    });
    await http().post('/resilience/policies/guarded/reset').set(auth).send({ route: 'eu' }).expect(200, {
      policy: 'guarded',
      route: 'eu',
      reset: true,
    });
  });

  it('clear takes the route from the body too, and leaves the other routes forced', async () => {
    await http().post('/resilience/policies/limited/force-open?route=eu').set(auth).expect(200);
    await http().post('/resilience/policies/limited/force-open?route=us').set(auth).expect(200);
    await http()
      .delete('/resilience/policies/limited/force-open')
      .set(auth)
      .send({ route: 'eu' })
      .expect(200, {
        policy: 'limited',
        route: 'eu',
        forcedOpen: false,
      });
    expect(await forced()).toEqual([{ policy: 'limited', route: 'us' }]);
  });

  it('accepts the same route in body and query; different ones are a 400 and change nothing', async () => {
    await http()
      .post('/resilience/policies/limited/force-open?route=eu')
      .set(auth)
      .send({ route: 'eu' })
      .expect(200, { policy: 'limited', route: 'eu', forcedOpen: true });
    const res = await http()
      .post('/resilience/policies/limited/force-open?route=us')
      .set(auth)
      .send({ route: 'eu' })
      .expect(400);
    expect(res.body).toMatchObject({
      statusCode: 400,
      error: 'Bad Request',
      code: 'invalid_request',
      violations: [{ path: 'route', value: 'eu' }],
    });
    expect(res.body.message).toContain('route must be');
    expect(await forced()).toEqual([{ policy: 'limited', route: 'eu' }]);
  });

  it('without any route (no body, or {}) still acts on the whole policy (SPEC §9)', async () => {
    await http().post('/resilience/policies/limited/force-open').set(auth).send({}).expect(200, {
      policy: 'limited',
      route: null,
      forcedOpen: true,
    });
    await http().get('/api/eu').expect(503);
    await http().delete('/resilience/policies/limited/force-open').set(auth).send({}).expect(200);
    await http().get('/api/eu').expect(200);
  });

  it('a route-less force-open before any traffic shows in GET /state as the policy-wide entry', async () => {
    await http().post('/resilience/policies/limited/force-open').set(auth).expect(200);
    const res = await http().get('/resilience/state?policy=limited').set(auth).expect(200);
    expect(res.body.state).toEqual([
      expect.objectContaining({ policy: 'limited', route: null, forcedOpen: true }),
    ]);
  });

  describe.each([
    ['POST', 'force-open'],
    ['DELETE', 'force-open'],
    ['POST', 'reset'],
  ] as const)(
    '%s …/%s refuses a request whose route it cannot read, and changes nothing',
    (method, action) => {
      const send = (query = '') => {
        const url = `/resilience/policies/limited/${action}${query}`;
        return (method === 'POST' ? http().post(url) : http().delete(url)).set(auth);
      };
      const invalid = (path: string, value: unknown) => ({
        statusCode: 400,
        error: 'Bad Request',
        code: 'invalid_request',
        violations: [expect.objectContaining({ path, value })],
      });

      beforeEach(async () => {
        // Something to lose: a DELETE or reset that wrongly went policy-wide would clear this.
        if (method === 'DELETE')
          await http().post('/resilience/policies/limited/force-open?route=us').set(auth).expect(200);
      });
      afterEach(async () => {
        expect(await forced()).toEqual(method === 'DELETE' ? [{ policy: 'limited', route: 'us' }] : []);
      });

      it.each([
        ['null', { route: null }, null],
        ['a number', { route: 42 }, 42],
        ['an empty string', { route: '' }, ''],
        ['an array', { route: ['eu'] }, ['eu']],
      ])('body route %s → 400 naming `route`', async (_what, body, value) => {
        const res = await send().send(body).expect(400);
        expect(res.body).toMatchObject(invalid('route', value));
        expect(res.body.message).toMatch(/^Invalid admin request: route must be a non-empty string, got /);
      });

      it('an unknown body field (a typo of route) → 400 naming it', async () => {
        const res = await send().send({ rout: 'us' }).expect(400);
        expect(res.body).toMatchObject(invalid('rout', 'us'));
      });

      it('a body that is not a JSON object → 400', async () => {
        const res = await send().send(['us']).expect(400);
        expect(res.body).toMatchObject(invalid('body', ['us']));
      });

      it('an empty ?route= → 400', async () => {
        const res = await send('?route=').expect(400);
        expect(res.body).toMatchObject(invalid('?route', ''));
      });

      it('a repeated ?route= → 400', async () => {
        const res = await send('?route=us&route=eu').expect(400);
        expect(res.body).toMatchObject(invalid('?route', ['us', 'eu']));
      });

      it('an unknown query parameter (a typo of route) → 400 naming it', async () => {
        const res = await send('?rout=us').expect(400);
        expect(res.body).toMatchObject(invalid('?rout', 'us'));
      });

      it.each([
        ['text/plain', 'us'],
        ['application/x-www-form-urlencoded', 'route=us'],
      ])('a %s body → 415', async (type, body) => {
        const res = await send().set('Content-Type', type).send(body).expect(415);
        expect(res.body).toMatchObject({
          statusCode: 415,
          error: 'Unsupported Media Type',
          code: 'unsupported_media_type',
        });
        expect(res.body.message).toContain('application/json');
      });
    },
  );

  describe('GET /state', () => {
    it('a repeated ?policy= → 400, not an unknown policy "a,b"', async () => {
      const res = await http().get('/resilience/state?policy=limited&policy=guarded').set(auth).expect(400);
      expect(res.body).toMatchObject({
        statusCode: 400,
        code: 'invalid_request',
        violations: [{ path: '?policy', constraint: expect.any(String), value: ['limited', 'guarded'] }],
      });
    });

    it('an empty ?policy= → 400', async () => {
      const res = await http().get('/resilience/state?policy=').set(auth).expect(400);
      expect(res.body).toMatchObject({
        code: 'invalid_request',
        violations: [{ path: '?policy', value: '' }],
      });
    });

    it('an unknown query parameter → 400', async () => {
      const res = await http().get('/resilience/state?polcy=limited').set(auth).expect(400);
      expect(res.body).toMatchObject({ code: 'invalid_request', violations: [{ path: '?polcy' }] });
    });
  });

  it('PUT reports a name mismatch and a non-object body with violations, like spec errors', async () => {
    const mismatch = await http()
      .put('/resilience/policies/limited')
      .set(auth)
      .send({ name: 'guarded', strategies: [] })
      .expect(400);
    expect(mismatch.body).toMatchObject({
      statusCode: 400,
      error: 'Bad Request',
      code: 'invalid_policy',
      violations: [{ path: 'name', value: 'guarded' }],
    });
    expect(mismatch.body.message).toMatch(/^Invalid policy spec 'limited': name must be /);
    const notObject = await http().put('/resilience/policies/limited').set(auth).send(['x']).expect(400);
    expect(notObject.body).toMatchObject({
      code: 'invalid_policy',
      violations: [{ path: 'body', value: ['x'] }],
    });
    await http()
      .put('/resilience/policies/limited')
      .set(auth)
      .set('Content-Type', 'text/plain')
      .send('{"strategies":[]}')
      .expect(415);
    const query = await http()
      .put('/resilience/policies/limited?route=eu')
      .set(auth)
      .send({ strategies: [] })
      .expect(400);
    expect(query.body).toMatchObject({
      code: 'invalid_request',
      violations: [{ path: '?route', value: 'eu' }],
    });
  });
});

describe.each(ADAPTERS)('admin HTTP API: hostile and unusual requests (%s)', (adapter) => {
  let app: INestApplication;
  const auth = { Authorization: 'Bearer s3cret' };
  const http = () => request(app.getHttpServer());
  const forced = async (): Promise<{ policy: string; route: string | null }[]> => {
    const res = await http().get('/resilience/state').set(auth).expect(200);
    return (res.body.state as { policy: string; route: string | null; forcedOpen: boolean }[])
      .filter((s) => s.forcedOpen)
      .map(({ policy, route }) => ({ policy, route }));
  };
  afterEach(async () => {
    await app.close();
  });

  it('with the body parser off, a route in the body is never read as "no route" (the whole policy)', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({ policies: policies(), clock: new FakeClock() }),
        ResilienceAdminModule.forRoot({ guard: TokenGuard }),
      ],
      controllers: [ApiController],
    }).compile();
    app = moduleRef.createNestApplication(
      adapter === 'express' ? new ExpressAdapter() : new FastifyAdapter(),
      { logger: false, bodyParser: false },
    );
    await app.init();
    if (adapter === 'fastify')
      await (app.getHttpAdapter().getInstance() as { ready(): Promise<unknown> }).ready();
    const res = await http().post('/resilience/policies/limited/force-open').set(auth).send({ route: 'eu' });
    if (adapter === 'express') {
      // Express leaves the body unparsed: refused, saying why and what to do instead.
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ statusCode: 400, code: 'invalid_request' });
      expect(res.body.message).toContain('?route=');
      expect(await forced()).toEqual([]);
      await http().get('/api/limited').expect(200);
      await http()
        .delete('/resilience/policies/limited/force-open')
        .set(auth)
        .send({ route: 'eu' })
        .expect(400);
      await http().post('/resilience/policies/limited/reset').set(auth).send({ route: 'eu' }).expect(400);
      const put = await http()
        .put('/resilience/policies/limited')
        .set(auth)
        .send({ strategies: [] })
        .expect(400);
      expect(put.body.message).toContain('did not parse it');
      expect(app.get(Resilience).policy('limited')?.rateLimit?.options.permits).toBe(2);
      // The query string still works without a body parser.
      await http().post('/resilience/policies/limited/force-open?route=eu').set(auth).expect(200);
      expect(await forced()).toEqual([{ policy: 'limited', route: 'eu' }]);
    } else {
      // Fastify parses JSON itself whatever Nest's bodyParser option says.
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ policy: 'limited', route: 'eu', forcedOpen: true });
      expect(await forced()).toEqual([{ policy: 'limited', route: 'eu' }]);
    }
  });

  it('a huge invalid spec draws a bounded 400: the first violations, a count of the rest, values cut short', async () => {
    app = await boot(adapter, { guard: TokenGuard });
    // Under Express's default 100 KB body limit; without the bounds its 400 was over 400 KB.
    const wide = Array.from({ length: 5_000 }, (_, i) => i);
    const spec = {
      strategies: [{ type: 'retry', junk: wide }, ...Array.from({ length: 2_000 }, () => ({ type: 'nope' }))],
    };
    const sent = JSON.stringify(spec);
    expect(sent.length).toBeLessThan(100_000);
    const put = await http()
      .put('/resilience/policies/limited')
      .set(auth)
      .set('Content-Type', 'application/json')
      .send(sent)
      .expect(400);
    expect(put.body.code).toBe('invalid_policy');
    expect(put.body.violations).toHaveLength(50);
    expect(put.body.violationCount).toBe(2_002); // junk, the missing maxAttempts, 2,000 unknown types
    expect(put.body.message).toMatch(/^Invalid policy spec 'limited': strategies\[0\]\./);
    expect(put.body.message).toMatch(new RegExp(`; and ${put.body.violationCount - 50} more violations$`));
    const junk = put.body.violations.find((v: { path: string }) => v.path.endsWith('.junk'));
    expect(junk.value).toHaveLength(21);
    expect(junk.value[20]).toBe('… 4980 more');
    expect(JSON.stringify(put.body).length).toBeLessThan(40_000);
    expect(app.get(Resilience).policy('limited')?.rateLimit?.options.permits).toBe(2);
    // A few violations are reported whole, in core's own words, without a count.
    const few = await http()
      .put('/resilience/policies/limited')
      .set(auth)
      .send({ strategies: [{ type: 'retry', maxAttempts: -1 }], x: 'y'.repeat(500) })
      .expect(400);
    expect(few.body.violationCount).toBeUndefined();
    expect(few.body.violations).toHaveLength(2);
    expect(few.body.violations[0]).toEqual({
      path: 'x',
      constraint: expect.any(String),
      value: `${'y'.repeat(200)}… (500 characters)`,
    });
  });

  it('a deeply nested value in a spec or a route body is a 400 naming its path, not a 500', async () => {
    app = await boot(adapter, { guard: TokenGuard });
    const deep = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);
    const put = await http()
      .put('/resilience/policies/limited')
      .set(auth)
      .set('Content-Type', 'application/json')
      .send(`{"strategies":[],"x":${deep(20_000)}}`)
      .expect(400);
    expect(put.body).toMatchObject({
      statusCode: 400,
      code: 'invalid_policy',
      violations: [{ path: 'x', constraint: expect.any(String), value: expect.anything() }],
    });
    expect(put.body.message).toMatch(/^Invalid policy spec 'limited': x must be a known policy field/);
    expect(JSON.stringify(put.body).length).toBeLessThan(2_000);
    const nestedStrategies = await http()
      .put('/resilience/policies/limited')
      .set(auth)
      .set('Content-Type', 'application/json')
      .send(`{"strategies":${deep(20_000)}}`)
      .expect(400);
    expect(nestedStrategies.body).toMatchObject({
      code: 'invalid_policy',
      violations: [expect.objectContaining({ path: 'strategies[0]' })],
    });
    expect(app.get(Resilience).policy('limited')?.rateLimit?.options.permits).toBe(2);
    const route = await http()
      .post('/resilience/policies/limited/force-open')
      .set(auth)
      .set('Content-Type', 'application/json')
      .send(`{"route":${deep(20_000)}}`)
      .expect(400);
    expect(route.body).toMatchObject({ code: 'invalid_request', violations: [{ path: 'route' }] });
    expect(await forced()).toEqual([]);
    // Shallow values are still echoed as given.
    const shallow = await http()
      .post('/resilience/policies/limited/force-open')
      .set(auth)
      .send({ route: { a: [1, { b: [2] }] } })
      .expect(400);
    expect(shallow.body.violations).toEqual([
      { path: 'route', constraint: 'a non-empty string', value: { a: [1, { b: [2] }] } },
    ]);
  });
});
