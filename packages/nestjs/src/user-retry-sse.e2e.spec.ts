import 'reflect-metadata';
import type { ClientRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Controller, Sse, UseInterceptors, type INestApplication, type MessageEvent } from '@nestjs/common';
import { CircuitBreakerStrategy, Resilience, ResiliencePolicy, type ResilienceEvent } from '@ballast/core';
import { FakeClock } from '@ballast/testing';
import { Observable, type Subscriber } from 'rxjs';
import { ADAPTERS, bootApp, eventually, openRequest } from './__tests__/harness';
import { RetryTwice } from './__tests__/user-interceptors';
import { ResilienceModule, Resilient } from './index';

/**
 * nest #11923 on `@Sse()` routes, which stay on the interceptor and are gated by the breaker
 * only: the user's interceptor re-subscribes after a mid-stream failure. Each re-subscription must be a new stream
 * admitted by the breaker again, each failure must count once, and the permit of the last stream must be given back
 * when the client leaves.
 */

/** The streams the handlers opened: each sends `open <n>` at once and stays open until the test fails it. */
const feed = { opened: 0, closed: 0, live: [] as Subscriber<MessageEvent>[] };
function stream(): Observable<MessageEvent> {
  return new Observable<MessageEvent>((subscriber) => {
    feed.live.push(subscriber);
    subscriber.next({ data: `open ${++feed.opened}` });
    return () => {
      feed.closed++;
    };
  });
}
/** The newest stream fails mid-stream, the way a dropped upstream connection would. */
function failNewest(): void {
  feed.live.at(-1)!.error(Object.assign(new Error('upstream reset'), { code: 'ECONNRESET' }));
}

@Controller()
@UseInterceptors(RetryTwice)
class FeedController {
  @Sse('feed')
  @Resilient('feed')
  feed(): Observable<MessageEvent> {
    return stream();
  }

  @Sse('probe')
  @Resilient('probe')
  probe(): Observable<MessageEvent> {
    return stream();
  }
}

/** A streaming client: what it has received so far, and whether the response ended. */
function read(req: ClientRequest): { body: string; ended: boolean; status: number } {
  const seen = { body: '', ended: false, status: 0 };
  req.on('response', (res) => {
    seen.status = res.statusCode ?? 0;
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => (seen.body += chunk));
    res.on('end', () => (seen.ended = true));
    res.on('error', () => {}); // the test destroys the request on purpose
  });
  return seen;
}

describe.each(ADAPTERS)("a user's retrying interceptor around @Resilient @Sse routes (%s)", (adapter) => {
  let app: INestApplication;
  let clock: FakeClock;
  let resilience: Resilience;
  let port: number;
  let events: ResilienceEvent[];
  const open: ClientRequest[] = [];
  const calls = (policy: string) =>
    events.flatMap((e) => (e.type === 'call' && e.policy === policy ? [e.outcome] : []));
  const breakerOf = async (policy: string) => (await resilience.admin.inspect({ policy }))[0]!.breaker!;

  /** Opens the route and waits (on real network events) until the body holds `text` or the response ends. */
  async function connect(path: string, text: string) {
    const req = openRequest(port, path);
    open.push(req);
    const seen = read(req);
    await until(seen, text);
    return { req, seen };
  }
  async function until(seen: { body: string; ended: boolean }, text: string): Promise<void> {
    await eventually(() => seen.body.includes(text) || seen.ended);
    expect(seen.body).toContain(text);
  }

  beforeEach(async () => {
    clock = new FakeClock();
    feed.opened = feed.closed = 0;
    feed.live = [];
    events = [];
    const breaker = (name: string, minThroughput: number) =>
      new ResiliencePolicy({
        name,
        strategies: [
          new CircuitBreakerStrategy({
            failureRatio: 0.5,
            samplingWindow: '10s',
            minThroughput,
            breakDuration: '5s',
            halfOpenMaxCalls: 1,
          }),
        ],
      });
    app = await bootApp(
      adapter,
      {
        imports: [ResilienceModule.forRoot({ clock, policies: [breaker('feed', 100), breaker('probe', 1)] })],
        controllers: [FeedController],
      },
      { listen: true },
    );
    port = (app.getHttpServer().address() as AddressInfo).port;
    resilience = app.get(Resilience);
    resilience.on((e) => events.push(e));
  });
  afterEach(async () => {
    for (const req of open.splice(0)) req.destroy();
    // every stream a test opened is torn down before the next test counts its own
    await eventually(() => feed.closed === feed.opened);
    await app.close();
  });

  it('opens a new gated stream on each re-subscription, counts each failure once, and gives the last permit back on disconnect', async () => {
    const { req, seen } = await connect('/feed', 'data: open 1');
    failNewest();
    await until(seen, 'data: open 2');
    failNewest();
    await until(seen, 'data: open 3');
    // two streams failed mid-stream, one breaker outcome each; the third is still open
    expect(calls('feed')).toEqual(['failure', 'failure']);
    expect(await breakerOf('feed')).toMatchObject({ state: 'closed', calls: 2 });
    expect(feed.closed).toBe(2);

    req.destroy();
    await eventually(() => feed.closed === 3 && calls('feed').length === 3);
    // the client left: the third stream is unsubscribed and its permit settled as cancelled, which records nothing
    expect(calls('feed')).toEqual(['failure', 'failure', 'cancelled']);
    expect(await breakerOf('feed')).toMatchObject({ state: 'closed', calls: 2 });
    expect(feed.opened).toBe(3);
  });

  it('admits each re-subscription again: forced open in between, the re-subscriptions are refused', async () => {
    const { seen } = await connect('/feed', 'data: open 1');
    await resilience.admin.forceOpen('feed');
    failNewest();
    await eventually(() => seen.ended);
    // the user's two re-subscriptions were refused before the handler ran again; the client got the last refusal
    expect(feed.opened).toBe(1);
    expect(calls('feed')).toEqual(['failure', 'rejected', 'rejected']);
    expect(events.flatMap((e) => (e.type === 'rejected' && e.policy === 'feed' ? [e.code] : []))).toEqual([
      'resilience_forced_open',
      'resilience_forced_open',
    ]);
    expect(seen.body).toContain('event: error');
    expect(seen.body).not.toContain('data: open 2');
  });

  it('opens the breaker on the failure, refuses the re-subscriptions, and a disconnected probe leaves no lease behind', async () => {
    const first = await connect('/probe', 'data: open 1');
    failNewest();
    await eventually(() => first.seen.ended);
    expect(calls('probe')).toEqual(['failure', 'rejected', 'rejected']);
    expect(events.filter((e) => e.type === 'breaker_state')).toEqual([
      expect.objectContaining({ from: 'closed', to: 'open' }),
    ]);
    expect(first.seen.body).toContain('event: error');
    expect(feed.opened).toBe(1);

    await clock.advance(5_000);
    // the one half-open probe: admitted, then the client leaves mid-stream
    const probe = await connect('/probe', 'data: open 2');
    expect(await breakerOf('probe')).toMatchObject({ state: 'half_open' });
    probe.req.destroy();
    await eventually(() => feed.closed === 2 && calls('probe').length === 4);
    expect(calls('probe').at(-1)).toBe('cancelled');

    // a lease kept by the cancelled probe would refuse this stream (503 circuit_open); it is admitted as the probe
    const next = await connect('/probe', 'data: open 3');
    expect(next.seen.status).toBe(200);
    expect(await breakerOf('probe')).toMatchObject({ state: 'half_open' });
    expect(calls('probe')).toEqual(['failure', 'rejected', 'rejected', 'cancelled']);
  });
});
