import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { Resilience, isResilienceError } from '@ballast/core';
import request from 'supertest';
import { ADAPTERS, ApiController, TokenGuard, auth, boot } from '../__tests__/admin-fixtures';
import { ResilienceAdminModule, type ResilienceAdminOptions } from '../index';

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
      scope: 'fleet',
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
      scope: 'fleet',
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
      scope: 'fleet',
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
      version: 1, // 0 as configured, +1 per retune (SPEC §14.1)
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
