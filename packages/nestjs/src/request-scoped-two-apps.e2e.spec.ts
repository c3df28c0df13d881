import 'reflect-metadata';
import { Controller, Get, Inject, Injectable, Scope, type INestApplication } from '@nestjs/common';
import { REQUEST } from '@nestjs/core';
import { RateLimitStrategy, ResiliencePolicy } from '@ballast/core';
import { FakeClock } from '@ballast/testing';
import request from 'supertest';
import { ADAPTERS, bootApp } from './__tests__/harness';
import { ResilienceModule, Resilient } from './index';

/** A request-scoped provider with a decorated method (its prototype is wrapped, shared by every application). */
@Injectable({ scope: Scope.REQUEST })
class ScopedQuotes {
  constructor(@Inject(REQUEST) private readonly req: object) {}

  @Resilient('limited')
  async quote(): Promise<{ scoped: boolean }> {
    return { scoped: typeof this.req === 'object' };
  }
}

/** An undecorated route: the only policy is the provider's. */
@Controller()
class QuotesController {
  constructor(private readonly quotes: ScopedQuotes) {}

  @Get('quote')
  quote(): Promise<{ scoped: boolean }> {
    return this.quotes.quote();
  }
}

/** An application whose 'limited' policy allows `permits` calls per hour. */
function boot(adapter: (typeof ADAPTERS)[number], permits: number): Promise<INestApplication> {
  return bootApp(adapter, {
    imports: [
      ResilienceModule.forRoot({
        clock: new FakeClock(),
        policies: [
          new ResiliencePolicy({
            name: 'limited',
            strategies: [new RateLimitStrategy({ permits, per: '1h' })],
          }),
        ],
      }),
    ],
    controllers: [QuotesController],
    providers: [ScopedQuotes],
  });
}

describe.each(ADAPTERS)('request-scoped decorated providers and several applications (%s)', (adapter) => {
  const apps: INestApplication[] = [];
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
  });

  it("runs the application's own policy again once a later application has closed", async () => {
    const first = await boot(adapter, 1);
    apps.push(first);
    const second = await boot(adapter, 100);
    await request(second.getHttpServer()).get('/quote').expect(200, { scoped: true });
    await second.close();
    await request(first.getHttpServer()).get('/quote').expect(200, { scoped: true });
    // the first application's one permit is spent: its own bucket, not the closed application's hundred
    await request(first.getHttpServer()).get('/quote').expect(429);
  });

  it('a closed application that was not the latest leaves the binding to the latest one alive', async () => {
    const first = await boot(adapter, 100);
    const second = await boot(adapter, 1);
    apps.push(second);
    await first.close();
    await request(second.getHttpServer()).get('/quote').expect(200);
    await request(second.getHttpServer()).get('/quote').expect(429);
  });
});
