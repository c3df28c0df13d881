import 'reflect-metadata';
import { Injectable, type CanActivate, type ExecutionContext, type INestApplication } from '@nestjs/common';
import { InMemoryControlStore, type ControlStore } from '@ballast/core';
import { FakeClock } from '@ballast/testing';
import request from 'supertest';
import { ADAPTERS, bootApp } from '../__tests__/harness';
import { ApiController, policies } from '../__tests__/admin-fixtures';
import { ResilienceAdminModule, ResilienceModule, type ResilienceAdminOptions } from '../index';

/** SPEC §14.1 over HTTP: two Nest apps sharing one control store (a fleet in one process). */

const TOKEN = 'Bearer t0ken-that-must-never-be-audited';
const auth = { Authorization: TOKEN };

/** A guard that authenticates the token and sets the principal, as Passport-style guards do. */
@Injectable()
class PrincipalGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const req = context
      .switchToHttp()
      .getRequest<{ headers: Record<string, string | undefined>; user?: unknown }>();
    if (req.headers['authorization'] !== TOKEN) return false;
    req.user = { sub: 'alice', token: TOKEN, roles: ['ops'] };
    return true;
  }
}

/** The shared store, with a switch that takes it down. */
class SwitchableStore extends InMemoryControlStore implements ControlStore {
  down = false;
  override write(...args: Parameters<InMemoryControlStore['write']>) {
    if (this.down) throw Object.assign(new Error('connection refused'), { code: 'ECONNREFUSED' });
    return super.write(...args);
  }
}

async function replica(
  adapter: (typeof ADAPTERS)[number],
  store: ControlStore,
  admin: Partial<ResilienceAdminOptions> = {},
): Promise<INestApplication> {
  return bootApp(adapter, {
    imports: [
      ResilienceModule.forRoot({ policies: policies(), clock: new FakeClock(), stores: { control: store } }),
      ResilienceAdminModule.forRoot({ guard: PrincipalGuard, ...admin }),
    ],
    controllers: [ApiController],
  });
}

describe.each(ADAPTERS)('admin HTTP API with a shared control store (%s)', (adapter) => {
  let store: SwitchableStore;
  let a: INestApplication;
  let b: INestApplication;
  const http = (app: INestApplication) => request(app.getHttpServer());

  beforeEach(async () => {
    store = new SwitchableStore();
    [a, b] = await Promise.all([replica(adapter, store), replica(adapter, store)]);
  });
  afterEach(async () => {
    await Promise.all([a.close(), b.close()]);
  });

  it('PUT …/mode through A puts B in shadow: its rate limit reports and no longer refuses; GET /state shows it', async () => {
    await http(a)
      .put('/resilience/policies/limited/mode')
      .set(auth)
      .send({ mode: 'shadow', reason: 'watch the limit' })
      .expect(200, { policy: 'limited', mode: 'shadow', scope: 'fleet' });
    for (let i = 0; i < 4; i++) await http(b).get('/api/limited').expect(200); // 2 per minute when enforced
    const state = await http(b).get('/resilience/state?policy=limited').set(auth).expect(200);
    expect(state.body.state).toEqual([expect.objectContaining({ policy: 'limited', mode: 'shadow' })]);
    await http(a).put('/resilience/policies/limited/mode').set(auth).send({ mode: 'enforce' }).expect(200);
    await http(b).get('/api/limited').expect(429);
    const bad = await http(a).put('/resilience/policies/limited/mode').set(auth).send({ mode: 'loud', x: 1 });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/x must be a known field \(mode, reason, scope\)/);
    const badMode = await http(a).put('/resilience/policies/limited/mode').set(auth).send({ mode: 'loud' });
    expect(badMode.status).toBe(400);
    expect(badMode.body.message).toMatch(/mode must be one of 'enforce', 'shadow', got 'loud'/);
    const audit = await http(b).get('/resilience/audit').set(auth).expect(200);
    expect(audit.body.entries.map((e: { value?: unknown }) => e.value)).toEqual(['enforce', 'shadow']);
  });

  it('PUT …/chaos through A injects on B, as a patch; a bad patch is a 400 naming each field', async () => {
    await http(a)
      .put('/resilience/policies/guarded/chaos')
      .set(auth)
      .send({ enabled: true, outcome: { rate: 1, value: { canned: true } }, reason: 'game day' })
      .expect(200);
    // The fixture's handler fails (503) until told otherwise: the injected outcome replaces it.
    await http(b).get('/api/flaky').expect(200, { canned: true });
    await http(b).get('/api/limited').expect(200, { ok: true }); // another policy: untouched
    const bad = await http(a)
      .put('/resilience/policies/guarded/chaos')
      .set(auth)
      .send({ fault: { rate: 2 }, latency: { rate: 0.5 } });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/fault\.rate must be/);
    expect(bad.body.message).toMatch(/latency\.delay must be/);
    await http(a).put('/resilience/policies/guarded/chaos').set(auth).send({ enabled: false }).expect(200);
    await http(b).get('/api/flaky').expect(503); // the handler itself again
    const audit = await http(b).get('/resilience/audit?limit=2').set(auth).expect(200);
    expect(audit.body.entries.map((e: { action: string }) => e.action)).toEqual(['setChaos', 'setChaos']);
  });

  it('a force-open with ttl and reason through A refuses on B; the audit names the principal, never the token', async () => {
    await http(a)
      .post('/resilience/policies/limited/force-open')
      .set(auth)
      .send({ route: 'eu', ttl: '10m', reason: 'incident 42' })
      .expect(200, { policy: 'limited', route: 'eu', forcedOpen: true, scope: 'fleet' });
    const refused = await http(b).get('/api/eu').expect(503);
    expect(refused.body).toMatchObject({ code: 'resilience_forced_open' });
    await http(b).get('/api/limited').expect(200);
    const audit = await http(b).get('/resilience/audit').set(auth).expect(200);
    expect(audit.body.entries).toEqual([
      expect.objectContaining({
        action: 'forceOpen',
        policy: 'limited',
        route: 'eu',
        scope: 'fleet',
        actor: 'alice',
        reason: 'incident 42',
        ttl: 600_000,
      }),
    ]);
    expect(JSON.stringify(audit.body)).not.toContain('t0ken');
    await http(b)
      .delete('/resilience/policies/limited/force-open')
      .set(auth)
      .send({ route: 'eu' })
      .expect(200);
    await http(a).get('/api/eu').expect(200);
  });

  it('scope local acts on the replica called only', async () => {
    await http(a)
      .post('/resilience/policies/limited/force-open')
      .set(auth)
      .send({ scope: 'local' })
      .expect(200, { policy: 'limited', route: null, forcedOpen: true, scope: 'local' });
    await http(a).get('/api/limited').expect(503);
    await http(b).get('/api/limited').expect(200);
  });

  it('PUT with If-Match is compare-and-set: the stale writer gets 409 and changes nothing anywhere', async () => {
    const spec = (permits: number) => ({ strategies: [{ type: 'rateLimit', permits, per: '1m' }] });
    const won = await http(a)
      .put('/resilience/policies/limited')
      .set(auth)
      .set('If-Match', '0')
      .send(spec(5))
      .expect(200);
    expect(won.body).toMatchObject({ policy: 'limited', version: 1 });
    const lost = await http(b)
      .put('/resilience/policies/limited')
      .set(auth)
      .set('If-Match', '"0"')
      .send(spec(9))
      .expect(409);
    expect(lost.body).toMatchObject({ statusCode: 409, code: 'version_conflict', version: 1 });
    await http(b).get('/api/limited').expect(200);
    const state = await http(b).get('/resilience/state?policy=limited').set(auth).expect(200);
    expect(state.body.state[0]).toMatchObject({ version: 1, rateLimitTokens: 4 }); // 5 permits, one taken
    const bad = await http(b)
      .put('/resilience/policies/limited')
      .set(auth)
      .set('If-Match', '*')
      .send(spec(9))
      .expect(400);
    expect(bad.body.violations).toEqual([
      { path: 'If-Match', constraint: 'a policy version (e.g. 3 or "3")', value: '*' },
    ]);
  });

  it('store down: a fleet write is 503 resilience_store_unavailable and changes nothing; the local scope still works', async () => {
    store.down = true;
    const res = await http(a).post('/resilience/policies/limited/force-open').set(auth).expect(503);
    expect(res.body).toMatchObject({ statusCode: 503, code: 'resilience_store_unavailable' });
    await http(a).get('/api/limited').expect(200);
    await http(b).get('/api/limited').expect(200);
    await http(a)
      .post('/resilience/policies/limited/force-open')
      .set(auth)
      .send({ scope: 'local' })
      .expect(200);
    await http(a).get('/api/limited').expect(503);
    await http(a).get('/resilience/state').set(auth).expect(200);
  });

  it('GET /replicas lists both; GET /audit takes ?limit within 1–1000', async () => {
    const replicas = await http(a).get('/resilience/replicas').set(auth).expect(200);
    expect(replicas.body.replicas).toHaveLength(2);
    for (const r of replicas.body.replicas)
      expect(r).toEqual(expect.objectContaining({ id: expect.any(String), version: 0 }));
    for (const path of ['/resilience/policies/limited/force-open', '/resilience/policies/guarded/force-open'])
      await http(a).post(path).set(auth).expect(200);
    const last = await http(a).get('/resilience/audit?limit=1').set(auth).expect(200);
    expect(last.body.entries).toEqual([expect.objectContaining({ policy: 'guarded' })]);
    for (const limit of ['0', '1001', 'x', '1.5']) {
      const bad = await http(a).get(`/resilience/audit?limit=${limit}`).set(auth).expect(400);
      expect(bad.body.violations[0]).toMatchObject({
        path: '?limit',
        constraint: 'an integer from 1 to 1000',
      });
    }
    await http(a).get('/resilience/replicas').expect(403);
    await http(a).get('/resilience/audit').expect(403);
  });

  it('bad ttl, reason and scope are 400s naming the body field, and nothing changes', async () => {
    const res = await http(a)
      .post('/resilience/policies/limited/force-open')
      .set(auth)
      .send({ ttl: '10 minutes', reason: 'x'.repeat(501), scope: 'everywhere' })
      .expect(400);
    expect(res.body.violations.map((v: { path: string }) => v.path).sort()).toEqual([
      'reason',
      'scope',
      'ttl',
    ]);
    expect(res.body.message).toContain("ttl must be a duration > 0, got '10 minutes'");
    const typed = await http(a)
      .post('/resilience/policies/limited/force-open')
      .set(auth)
      .send({ ttl: true })
      .expect(400);
    expect(typed.body.violations[0]).toMatchObject({ path: 'ttl' });
    await http(b).get('/api/limited').expect(200);
    expect(await store.seq()).toBe(0);
  });
});

describe('ResilienceAdminModule.forRoot({ actor })', () => {
  it('audits the actor the option names (bounded to 200 characters); a throwing option names nobody', async () => {
    const store = new InMemoryControlStore();
    const app = await replica('express', store, {
      actor: (req) => `svc:${(req as { user: { sub: string } }).user.sub}`,
    });
    const throwing = await replica('express', store, {
      actor: () => {
        throw new Error('no');
      },
    });
    try {
      await request(app.getHttpServer())
        .post('/resilience/policies/limited/force-open')
        .set(auth)
        .expect(200);
      await request(throwing.getHttpServer())
        .delete('/resilience/policies/limited/force-open')
        .set(auth)
        .expect(200);
      const entries = (await store.audit(10)).map((e) => [e.action, e.actor]);
      expect(entries).toEqual([
        ['clearForcedOpen', undefined],
        ['forceOpen', 'svc:alice'],
      ]);
    } finally {
      await Promise.all([app.close(), throwing.close()]);
    }
    expect(() => ResilienceAdminModule.forRoot({ guard: PrincipalGuard, actor: 'alice' as never })).toThrow(
      /actor must be a function \(request\) => string \| undefined, got 'alice'/,
    );
  });
});
