import 'reflect-metadata';
import { Injectable, type INestApplicationContext } from '@nestjs/common';
import { Cron, Interval, ScheduleModule, SchedulerRegistry } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { ResiliencePolicy, RetryStrategy, currentSignal } from '@ballast/core';
import { FakeClock } from '@ballast/testing';
import { ResilienceModule, Resilient } from './index';

/** A nightly job whose dependency resets twice before it answers. */
@Injectable()
class Reports {
  attempts = 0;
  signals: (AbortSignal | undefined)[] = [];
  ran = 0;

  @Cron('0 3 * * *', { name: 'nightly' })
  @Resilient('retrying')
  nightly(): void {
    this.attempts++;
    this.signals.push(currentSignal());
    if (this.attempts < 3) throw Object.assign(new Error('warehouse reset'), { code: 'ECONNRESET' });
    this.ran++;
  }

  @Interval('every-hour', 3_600_000)
  @Resilient('retrying')
  hourly(): void {
    this.ran++;
  }
}

/**
 * `@Resilient` on a provider method that `@nestjs/schedule` also runs (`@Cron`, `@Interval`): the scheduler reads the
 * method from the instance at `onModuleInit`, after Ballast wrapped it, and must still find its schedule there.
 */
describe('@Resilient on scheduled provider methods (@nestjs/schedule)', () => {
  let app: INestApplicationContext;
  const clock = new FakeClock();

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        // Imported first on purpose: the wrapping must not depend on module order.
        ScheduleModule.forRoot(),
        ResilienceModule.forRoot({
          clock,
          policies: [
            new ResiliencePolicy({
              name: 'retrying',
              strategies: [
                new RetryStrategy({ maxAttempts: 3, backoff: { base: 1, max: 1, jitter: 'none' } }),
              ],
            }),
          ],
        }),
      ],
      providers: [Reports],
    }).compile();
    app = await moduleRef.init();
  });
  afterAll(async () => {
    await app?.close();
  });

  it('registers the jobs of wrapped methods', () => {
    const registry = app.get(SchedulerRegistry);
    expect(registry.getCronJobs().has('nightly')).toBe(true);
    expect(registry.getIntervals()).toContain('every-hour');
  });

  it('runs a cron tick under the policy: retried, with a signal per attempt', async () => {
    const reports = app.get(Reports);
    const job = app.get(SchedulerRegistry).getCronJob('nightly');
    await job.fireOnTick();
    // The scheduler does not await a tick's promise; the retries wait out the 1 ms backoff on the fake clock.
    for (let i = 0; i < 10 && reports.ran === 0; i++) await clock.advance(1);
    expect(reports.ran).toBe(1);
    expect(reports.attempts).toBe(3);
    expect(reports.signals.every((s) => s instanceof AbortSignal)).toBe(true);
  });
});
