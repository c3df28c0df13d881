import 'reflect-metadata';
import { request as httpRequest, type ClientRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Controller, Get, Injectable, type INestApplication } from '@nestjs/common';
import { Resilience, ResiliencePolicy, currentSignal, type ResilienceEvent } from '@ballast/core';
import { Observable } from 'rxjs';
import { ADAPTERS, bootApp, deferred, type Deferred, openRequest } from './__tests__/harness';
import { ClientClosedRequestError } from './client-disconnect';
import { Resilient, ResilienceModule } from './index';

/**
 * Real sockets, real clock: the only way to see a client disconnect is to disconnect. The waits here are bounded
 * by events (the handler entering, the signal aborting), never by fixed sleeps.
 */
@Injectable()
class AbortProbe {
  entered: Deferred<void> = deferred();
  aborted: Deferred<unknown> = deferred();
  tornDown: Deferred<void> = deferred();
}

@Controller()
class HangingController {
  constructor(private readonly probe: AbortProbe) {}

  @Get('hang')
  @Resilient('plain')
  hang(): Promise<never> {
    const signal = currentSignal()!;
    this.probe.entered.resolve();
    return new Promise((_, reject) =>
      signal.addEventListener('abort', () => {
        this.probe.aborted.resolve(signal.reason);
        reject(signal.reason);
      }),
    );
  }

  @Get('ignore')
  @Resilient('plain')
  ignore(): Promise<never> {
    this.probe.entered.resolve();
    return new Promise(() => {}); // never settles, never looks at its signal
  }

  @Get('hang-observable')
  @Resilient('plain')
  hangObservable(): Observable<never> {
    return new Observable<never>(() => {
      this.probe.entered.resolve();
      return () => this.probe.tornDown.resolve();
    });
  }

  @Get('ok')
  @Resilient('plain')
  ok(): { ok: true } {
    return { ok: true };
  }
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

describe.each(ADAPTERS)('client disconnect aborts the call (%s, real sockets)', (adapter) => {
  let app: INestApplication;
  let probe: AbortProbe;
  let events: ResilienceEvent[];
  let port: number;

  beforeEach(async () => {
    app = await bootApp(
      adapter,
      {
        imports: [
          ResilienceModule.forRoot({ policies: [new ResiliencePolicy({ name: 'plain', strategies: [] })] }),
        ],
        controllers: [HangingController],
        providers: [AbortProbe],
      },
      { listen: true },
    );
    probe = app.get(AbortProbe);
    events = [];
    app.get(Resilience).on((e) => events.push(e));
    port = (app.getHttpServer().address() as AddressInfo).port;
  });
  afterEach(async () => {
    await app.close();
  });

  const open = (path: string): ClientRequest => openRequest(port, path);

  async function get(path: string): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path, agent: false }, (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });
  }

  it('aborts the handler signal with ClientClosedRequestError when the client goes away', async () => {
    const req = open('/hang');
    await within(probe.entered.promise, 5000, 'the handler');
    req.destroy();
    const reason = await within(probe.aborted.promise, 5000, 'the abort');
    expect(reason).toBeInstanceOf(ClientClosedRequestError);
    const call = await within(waitForEvent(events, 'call'), 5000, 'the call event');
    expect(call).toMatchObject({ type: 'call', policy: 'plain', outcome: 'cancelled' });
  });

  it('settles at once even when the handler ignores its signal, and keeps serving', async () => {
    const req = open('/ignore');
    await within(probe.entered.promise, 5000, 'the handler');
    req.destroy();
    const call = await within(waitForEvent(events, 'call'), 5000, 'the call event');
    expect(call).toMatchObject({ outcome: 'cancelled' });
    expect(await get('/ok')).toEqual({ status: 200, body: '{"ok":true}' });
  });

  it('unsubscribes an observable handler when the client goes away', async () => {
    const req = open('/hang-observable');
    await within(probe.entered.promise, 5000, 'the handler');
    req.destroy();
    await within(probe.tornDown.promise, 5000, 'the teardown');
    expect(events.some((e) => e.type === 'call' && e.outcome === 'cancelled')).toBe(true);
  });

  it('does not abort a call whose response completed normally', async () => {
    expect(await get('/ok')).toEqual({ status: 200, body: '{"ok":true}' });
    expect(events.filter((e) => e.type === 'call').map((e) => (e as { outcome: string }).outcome)).toEqual([
      'success',
    ]);
  });
});

async function waitForEvent(
  events: ResilienceEvent[],
  type: ResilienceEvent['type'],
): Promise<ResilienceEvent> {
  for (let turn = 0; turn < 100_000; turn++) {
    const found = events.find((e) => e.type === type);
    if (found !== undefined) return found;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error(`no '${type}' event`);
}
