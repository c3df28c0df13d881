import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { Resilience } from '@ballast/core';
import { FakeClock } from '@ballast/testing';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import {
  ADAPTERS,
  ApiController,
  TokenGuard,
  auth,
  boot,
  forcedOpen,
  policies,
} from '../__tests__/admin-fixtures';
import { ResilienceAdminModule, ResilienceModule } from '../index';

describe.each(ADAPTERS)('admin HTTP API: hostile and unusual requests (%s)', (adapter) => {
  let app: INestApplication;
  const http = () => request(app.getHttpServer());
  const forced = () => forcedOpen(app);
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
      expect(res.body).toEqual({ policy: 'limited', route: 'eu', forcedOpen: true, scope: 'fleet' });
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
