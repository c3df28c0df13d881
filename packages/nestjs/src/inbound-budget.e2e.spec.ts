import 'reflect-metadata';
import { Controller, Get, Logger, type INestApplication } from '@nestjs/common';
import { ResiliencePolicy, RetryStrategy, currentCriticality, remainingTime } from '@ballast/core';
import { FakeClock } from '@ballast/testing';
import request from 'supertest';
import { Test } from '@nestjs/testing';
import { ADAPTERS, bootApp } from './__tests__/harness';
import { ResilienceModule, Resilient } from './index';

/**
 * The inbound side of deadline propagation (SPEC §14.4): a budget ≤ 0 is answered 504 without running the handler,
 * a budget above `headers.maxInboundBudget` is bound as the cap, a malformed one is ignored with one warning, and no
 * header value ever turns into a 500 — on a decorated handler and on an undecorated one alike.
 */
const runs = { decorated: 0, plain: 0 };

@Controller()
class BudgetController {
  @Get('decorated')
  @Resilient('retrying')
  decorated(): { remaining: number | null; level: number } {
    runs.decorated++;
    return { remaining: remainingTime() ?? null, level: currentCriticality() };
  }

  @Get('plain')
  plain(): { remaining: number | null; level: number } {
    runs.plain++;
    return { remaining: remainingTime() ?? null, level: currentCriticality() };
  }
}

describe.each(ADAPTERS)('inbound budgets and criticality (%s)', (adapter) => {
  let app: INestApplication;
  let warn: jest.SpyInstance;

  beforeAll(async () => {
    warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    app = await bootApp(adapter, {
      imports: [
        ResilienceModule.forRoot({
          clock: new FakeClock(),
          headers: { deadline: 'x-deadline-budget-ms', criticality: 'x-criticality', maxInboundBudget: '2s' },
          policies: [
            new ResiliencePolicy({ name: 'retrying', strategies: [new RetryStrategy({ maxAttempts: 2 })] }),
          ],
        }),
      ],
      controllers: [BudgetController],
    });
  });
  afterAll(async () => {
    warn.mockRestore();
    await app?.close();
  });
  beforeEach(() => {
    runs.decorated = runs.plain = 0;
  });

  it.each(['decorated', 'plain'] as const)(
    'a budget of 0 or below is answered 504 deadline_exceeded without running the %s handler',
    async (route) => {
      for (const budget of ['0', '-5', '-0.5']) {
        const res = await request(app.getHttpServer()).get(`/${route}`).set('x-deadline-budget-ms', budget);
        expect(res.status).toBe(504);
        expect(res.body).toMatchObject({ statusCode: 504, code: 'deadline_exceeded' });
      }
      expect(runs[route]).toBe(0);
    },
  );

  it.each(['decorated', 'plain'] as const)(
    'a budget above maxInboundBudget is bound as the cap (%s)',
    async (route) => {
      for (const budget of ['5000', '9'.repeat(10_000)]) {
        const res = await request(app.getHttpServer()).get(`/${route}`).set('x-deadline-budget-ms', budget);
        expect(res.status).toBe(200);
        expect(res.body.remaining).toBe(2000);
      }
      const within = await request(app.getHttpServer()).get(`/${route}`).set('x-deadline-budget-ms', '1500');
      expect(within.body.remaining).toBe(1500);
    },
  );

  it('malformed budgets are ignored (the handler runs with no deadline), warned about once, not once per request', async () => {
    warn.mockClear();
    const malformed = async (): Promise<void> => {
      for (const budget of ['abc', '1e309', 'Infinity', '12ms'])
        for (const route of ['decorated', 'plain']) {
          const res = await request(app.getHttpServer()).get(`/${route}`).set('x-deadline-budget-ms', budget);
          expect(res.status).toBe(200);
          expect(res.body.remaining).toBeNull();
        }
    };
    const warnings = (): number =>
      warn.mock.calls.filter((c) => String(c[0]).includes('malformed x-deadline-budget-ms')).length;
    await malformed();
    const first = warnings();
    expect(first).toBeGreaterThanOrEqual(1);
    await malformed();
    expect(warnings()).toBe(first);
  });

  it('an unknown criticality is ignored; a known one binds', async () => {
    const bad = await request(app.getHttpServer()).get('/plain').set('x-criticality', 'urgent!!');
    expect(bad.status).toBe(200);
    expect(bad.body.level).toBe(2);
    const good = await request(app.getHttpServer()).get('/plain').set('x-criticality', 'critical');
    expect(good.body.level).toBe(3);
  });
});

describe('the headers option', () => {
  it('refuses a maxInboundBudget that is no duration > 0, and an unknown key, naming each, at bootstrap', async () => {
    const error = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({
          headers: { deadline: 'x-b', maxInboundBudget: '-1s', propagate: 'yes', typo: 1 } as never,
        }),
      ],
    })
      .compile()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'configuration' });
    const message = (error as Error).message;
    expect(message).toContain("headers.maxInboundBudget must be a duration > 0 (e.g. '30s'), got '-1s'");
    expect(message).toContain("headers.propagate must be a boolean, got 'yes'");
    expect(message).toContain(
      'headers.typo must be a known headers option (deadline, criticality, maxInboundBudget, propagate), got 1',
    );
  });
});
