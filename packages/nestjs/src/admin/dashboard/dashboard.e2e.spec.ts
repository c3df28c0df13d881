import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import { isResilienceError } from '@ballast/core';
import { FakeClock, flushMicrotasks } from '@ballast/testing';
import { ApiController, TokenGuard, auth, policies } from '../../__tests__/admin-fixtures';
import { ADAPTERS, bootApp } from '../../__tests__/harness';
import { ResilienceAdminModule, ResilienceModule, type ResilienceAdminOptions } from '../../index';
import { CONTENT_SECURITY_POLICY } from './dashboard-assets';

/** Reads server-sent events from a fetch body, frame by frame. */
class EventReader {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #decoder = new TextDecoder();
  #buffer = '';
  constructor(body: ReadableStream<Uint8Array>) {
    this.#reader = body.getReader();
  }
  async next(type: string): Promise<unknown> {
    for (;;) {
      const end = this.#buffer.indexOf('\n\n');
      if (end >= 0) {
        const frame = this.#buffer.slice(0, end);
        this.#buffer = this.#buffer.slice(end + 2);
        const lines = frame.split('\n');
        if (lines[0] === `event: ${type}`) return JSON.parse(lines[1]!.slice('data: '.length)) as unknown;
        continue;
      }
      const { value, done } = await this.#reader.read();
      if (done) throw new Error(`the stream ended before a '${type}' event`);
      this.#buffer += this.#decoder.decode(value, { stream: true });
    }
  }
  cancel(): Promise<void> {
    return this.#reader.cancel();
  }
}

describe('ResilienceAdminModule.forRoot dashboard options', () => {
  it('refuses a malformed dashboard or dashboardInterval, naming the field, the constraint and the value', () => {
    let error: unknown;
    try {
      ResilienceAdminModule.forRoot({
        guard: TokenGuard,
        dashboard: 'yes',
        dashboardInterval: '10ms',
      } as unknown as ResilienceAdminOptions);
    } catch (e) {
      error = e;
    }
    expect(isResilienceError(error) && error.kind).toBe('configuration');
    expect((error as Error).message).toBe(
      "Invalid ResilienceAdminModule.forRoot options: dashboard must be a boolean, got 'yes'; dashboardInterval " +
        "must be a duration from 100ms to 60s (ms, or a string like '1s'), got '10ms'",
    );
    for (const dashboardInterval of [-1, '1 s', '2m', Number.NaN, {}])
      expect(() =>
        ResilienceAdminModule.forRoot({ guard: TokenGuard, dashboard: true, dashboardInterval } as never),
      ).toThrow(/dashboardInterval must be a duration/);
    for (const dashboardInterval of [100, '1s', '500ms', '60s'])
      expect(() =>
        ResilienceAdminModule.forRoot({ guard: TokenGuard, dashboard: true, dashboardInterval }),
      ).not.toThrow();
  });
});

describe.each(ADAPTERS)('the dashboard over HTTP (%s)', (adapter) => {
  let app: INestApplication;
  let clock: FakeClock;
  let base: string;
  let api: ApiController;

  const start = async (admin: ResilienceAdminOptions): Promise<void> => {
    clock = new FakeClock();
    app = await bootApp(
      adapter,
      {
        imports: [
          ResilienceModule.forRoot({ policies: policies(), clock }),
          ResilienceAdminModule.forRoot(admin),
        ],
        controllers: [ApiController],
      },
      { listen: true },
    );
    base = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
    api = app.get(ApiController);
  };
  afterEach(async () => {
    await app.close();
  });

  it('serves the shell without credentials, with a strict Content-Security-Policy and no inline code', async () => {
    await start({ guard: TokenGuard, dashboard: true });
    const res = await fetch(`${base}/resilience/ui`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    expect(CONTENT_SECURITY_POLICY).toMatch(/script-src 'self';/);
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/unsafe/);
    const html = await res.text();
    expect(html).toContain('<script src="ui/assets/dashboard.js" defer></script>');
    expect(html).not.toMatch(/<script>|<style|\sstyle=|\son\w+=/);
    const slash = await fetch(`${base}/resilience/ui/`, { redirect: 'manual' });
    // Express routes `…/ui/` here too: sent to `…/ui`, where the relative asset URLs resolve. Fastify's router
    // (strict about the slash) answers 404 for it before the dashboard sees it.
    if (adapter === 'express')
      expect([slash.status, slash.headers.get('location')]).toEqual([308, '/resilience/ui']);
    else expect(slash.status).toBe(404);
    const unknown = await fetch(`${base}/resilience/ui/assets/..%2Fpackage.json`);
    expect(unknown.status).toBe(404);
  });

  it('keeps the stream and the specs behind the guard', async () => {
    await start({ guard: TokenGuard, dashboard: true });
    expect((await fetch(`${base}/resilience/stream`)).status).toBe(403);
    expect(
      (await fetch(`${base}/resilience/stream`, { headers: { Authorization: 'Bearer no' } })).status,
    ).toBe(403);
    expect((await fetch(`${base}/resilience/specs/limited`)).status).toBe(403);
    const spec = await fetch(`${base}/resilience/specs/limited`, { headers: auth });
    expect(spec.status).toBe(200);
    expect(await spec.json()).toMatchObject({
      policy: 'limited',
      spec: { name: 'limited', strategies: [{ type: 'rateLimit', permits: 2 }] },
    });
    const unknown = await fetch(`${base}/resilience/specs/nope`, { headers: auth });
    expect([unknown.status, ((await unknown.json()) as { code: string }).code]).toEqual([
      404,
      'unknown_policy',
    ]);
  });

  it('streams a snapshot at once, breaker events as they happen, and a snapshot per interval', async () => {
    await start({ guard: TokenGuard, dashboard: true, dashboardInterval: '2s' });
    const res = await fetch(`${base}/resilience/stream`, { headers: auth });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const events = new EventReader(res.body!);
    expect(await events.next('snapshot')).toMatchObject({
      policies: expect.arrayContaining(['limited', 'guarded']),
    });
    api.failing = true;
    for (let i = 0; i < 2; i++) await fetch(`${base}/api/flaky`);
    expect(await events.next('policy')).toMatchObject({
      type: 'breaker_state',
      policy: 'guarded',
      to: 'open',
    });
    await clock.advance(2000);
    const snapshot = (await events.next('snapshot')) as {
      interval: number;
      entries: Record<string, unknown>[];
    };
    expect(snapshot.interval).toBe(2000);
    expect(snapshot.entries.find((e) => e['policy'] === 'guarded')).toMatchObject({
      route: null,
      breaker: { state: 'open' },
      rates: { failure: 1 },
      breakerHistory: [{ from: 'closed', to: 'open', ago: 2000 }],
    });
    await events.cancel();
  });

  it('stops its timer when the last viewer leaves, and app.close() ends open streams', async () => {
    await start({ guard: TokenGuard, dashboard: true });
    const timers = clock.pendingTimers();
    const first = await fetch(`${base}/resilience/stream`, { headers: auth });
    const reader = new EventReader(first.body!);
    await reader.next('snapshot');
    expect(clock.pendingTimers()).toBe(timers + 1);
    await reader.cancel();
    for (let i = 0; i < 50 && clock.pendingTimers() > timers; i++) {
      await new Promise((r) => setImmediate(r));
      await flushMicrotasks();
    }
    expect(clock.pendingTimers()).toBe(timers);
    const open = await fetch(`${base}/resilience/stream`, { headers: auth });
    const second = new EventReader(open.body!);
    await second.next('snapshot');
    await app.close(); // would hang on the open stream if module destroy did not end it
    await expect(second.next('snapshot')).rejects.toThrow(/ended|terminated/);
    app = { close: async () => undefined } as INestApplication;
  });

  it('is not served unless asked for', async () => {
    await start({ guard: TokenGuard });
    expect((await fetch(`${base}/resilience/ui`)).status).toBe(404);
    expect((await fetch(`${base}/resilience/stream`, { headers: auth })).status).toBe(404);
  });
});
