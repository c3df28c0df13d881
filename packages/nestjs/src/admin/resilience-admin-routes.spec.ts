import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { ADAPTERS, TokenGuard, auth, boot, forcedOpen } from '../__tests__/admin-fixtures';

describe.each(ADAPTERS)('admin HTTP API: which route an operation targets (%s)', (adapter) => {
  let app: INestApplication;
  const http = () => request(app.getHttpServer());
  const forced = () => forcedOpen(app);

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
      scope: 'fleet',
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
      scope: 'fleet',
    });
    await http().post('/resilience/policies/guarded/reset').set(auth).send({ route: 'eu' }).expect(200, {
      policy: 'guarded',
      route: 'eu',
      reset: true,
      scope: 'fleet',
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
        scope: 'fleet',
      });
    expect(await forced()).toEqual([{ policy: 'limited', route: 'us' }]);
  });

  it('accepts the same route in body and query; different ones are a 400 and change nothing', async () => {
    await http()
      .post('/resilience/policies/limited/force-open?route=eu')
      .set(auth)
      .send({ route: 'eu' })
      .expect(200, { policy: 'limited', route: 'eu', forcedOpen: true, scope: 'fleet' });
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
      scope: 'fleet',
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
