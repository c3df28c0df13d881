import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { AppModule } from '../app.module';
import { DemoConfig } from '../demo-config';
import type { Hop } from './chain.controller';

/**
 * The demo's chain over real HTTP on the real clock (the hops call each other through the network): the budget a
 * hop sees is never more than the one before it had, the criticality reaches the last hop, and a budget of 0 is
 * answered 504 at the first hop. No durations are asserted, only their order.
 */
describe.each(['express', 'fastify'] as const)('the demo chain (real HTTP, %s)', (adapter) => {
  let app: INestApplication;
  let base: string;

  beforeAll(async () => {
    // the chain needs no admin token; a fixed one keeps the demo from printing a random one
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
      .overrideProvider(DemoConfig)
      .useValue(new DemoConfig({ ADMIN_TOKEN: 'test-token' }))
      .compile();
    app = moduleRef.createNestApplication(
      adapter === 'express' ? new ExpressAdapter() : new FastifyAdapter(),
      {
        logger: false,
      },
    );
    await app.listen(0, '127.0.0.1');
    base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  });
  afterAll(async () => {
    await app?.close();
  });

  it('the budget shrinks (or holds) hop by hop, and the criticality travels with it', async () => {
    const res = await fetch(`${base}/chain/3`, {
      headers: { 'x-deadline-budget-ms': '20000', 'x-criticality': 'critical' },
    });
    expect(res.status).toBe(200);
    const hops = (await res.json()) as Hop[];
    expect(hops.map((h) => h.hop)).toEqual([3, 2, 1, 0]);
    expect(hops.every((h) => h.criticality === 3)).toBe(true);
    const budgets = hops.map((h) => h.budgetMs!);
    expect(budgets[0]).toBeLessThanOrEqual(20000);
    for (let i = 1; i < budgets.length; i++) expect(budgets[i]).toBeLessThanOrEqual(budgets[i - 1]!);
  });

  it('without a budget no hop has a deadline', async () => {
    const hops = (await (await fetch(`${base}/chain/2`)).json()) as Hop[];
    expect(hops.map((h) => h.budgetMs)).toEqual([null, null, null]);
  });

  it('a spent budget is answered 504 deadline_exceeded at once', async () => {
    const res = await fetch(`${base}/chain/3`, { headers: { 'x-deadline-budget-ms': '0' } });
    expect(res.status).toBe(504);
    expect(await res.json()).toMatchObject({ code: 'deadline_exceeded' });
  });
});
