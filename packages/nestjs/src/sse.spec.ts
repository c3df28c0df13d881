import 'reflect-metadata';
import { Controller, Sse, type INestApplication, type MessageEvent } from '@nestjs/common';
import { CircuitBreakerStrategy, Resilience, ResiliencePolicy } from '@ballast/core';
import { FakeClock } from '@ballast/testing';
import { Observable, of } from 'rxjs';
import request from 'supertest';
import { ADAPTERS, bootApp } from './__tests__/harness';
import { Resilient, ResilienceModule } from './index';

@Controller()
class FeedController {
  @Sse('feed')
  @Resilient('feed')
  feed(): Observable<MessageEvent> {
    return of({ data: 'a' }, { data: 'b' });
  }
}

describe.each(ADAPTERS)('@Sse handlers: the breaker only (%s)', (adapter) => {
  let app: INestApplication;

  beforeEach(async () => {
    app = await bootApp(adapter, {
      imports: [
        ResilienceModule.forRoot({
          clock: new FakeClock(),
          policies: [
            new ResiliencePolicy({
              name: 'feed',
              strategies: [
                new CircuitBreakerStrategy({
                  failureRatio: 0.5,
                  samplingWindow: '10s',
                  minThroughput: 1,
                  breakDuration: '5s',
                }),
              ],
            }),
          ],
        }),
      ],
      controllers: [FeedController],
    });
  });
  afterEach(async () => {
    await app.close();
  });

  it('streams every event of a gated stream', async () => {
    const res = await request(app.getHttpServer()).get('/feed').expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(res.text).toContain('data: a');
    expect(res.text).toContain('data: b');
  });

  it('does not open the stream while the policy is forced open: a plain 503 instead', async () => {
    await app.get(Resilience).admin.forceOpen('feed');
    const res = await request(app.getHttpServer()).get('/feed').expect(503);
    expect(res.text).not.toContain('data: a');
    expect(JSON.parse(res.text)).toMatchObject({ statusCode: 503, code: 'resilience_forced_open' });
  });
});
