import { EventEmitter } from 'node:events';
import { CircuitBreakerStrategy, Resilience, ResiliencePolicy } from '@ballast/core';
import { FakeClock, flushMicrotasks } from '@ballast/testing';
import { DashboardHub } from './dashboard-hub';
import { MAX_QUEUED_EVENTS, SseViewer, sseFrame, type SseSink } from './sse-viewer';

/** A response whose socket buffer is full while `full` is set; `drain()` empties it as Node does. */
class FakeSink extends EventEmitter implements SseSink {
  readonly frames: string[] = [];
  full = false;
  ended = false;
  write(chunk: string): boolean {
    this.frames.push(chunk);
    return !this.full;
  }
  end(): void {
    this.ended = true;
  }
  drain(): void {
    this.full = false;
    this.emit('drain');
  }
  events(type: string): unknown[] {
    return this.frames
      .filter((f) => f.startsWith(`event: ${type}\n`))
      .map((f) => JSON.parse(f.split('\ndata: ')[1]!) as unknown);
  }
}

describe('SseViewer (back-pressure)', () => {
  it('writes at once while the client keeps up', () => {
    const sink = new FakeSink();
    const viewer = new SseViewer(sink);
    viewer.snapshot(sseFrame('snapshot', 1));
    viewer.event(sseFrame('policy', 'a'));
    expect(sink.frames).toEqual([sseFrame('snapshot', 1), sseFrame('policy', 'a')]);
  });

  it('holds only the newest snapshot and a bounded queue of events for a slow client, then catches up', () => {
    const sink = new FakeSink();
    const viewer = new SseViewer(sink);
    sink.full = true;
    viewer.snapshot(sseFrame('snapshot', 0)); // this write fills the buffer
    expect(viewer.blocked).toBe(true);
    for (let i = 1; i <= 50; i++) viewer.snapshot(sseFrame('snapshot', i));
    for (let i = 0; i < MAX_QUEUED_EVENTS + 7; i++) viewer.event(sseFrame('policy', i));
    expect(sink.frames).toHaveLength(1); // nothing more was written while blocked
    expect(viewer.stats).toEqual({ coalesced: 49, dropped: 7 });
    sink.drain();
    expect(sink.events('snapshot')).toEqual([0, 50]);
    expect(sink.events('policy')).toHaveLength(MAX_QUEUED_EVENTS);
    expect(sink.events('dropped')).toEqual([{ events: 7 }]);
    // Events before the snapshot that followed them.
    expect(sink.frames[sink.frames.length - 1]).toBe(sseFrame('snapshot', 50));
  });

  it('blocked again in the middle of catching up, keeps the rest within its bounds', () => {
    const sink = new FakeSink();
    const viewer = new SseViewer(sink);
    sink.full = true;
    viewer.event(sseFrame('policy', 0));
    viewer.event(sseFrame('policy', 1));
    viewer.event(sseFrame('policy', 2));
    viewer.snapshot(sseFrame('snapshot', 9));
    sink.full = false;
    let writes = 0;
    const write = sink.write.bind(sink);
    sink.write = (chunk: string) => write(chunk) && ++writes < 1; // the first write in the flush fills it again
    sink.emit('drain');
    expect(sink.events('policy')).toEqual([0, 1]);
    sink.write = write;
    sink.drain();
    expect(sink.events('policy')).toEqual([0, 1, 2]);
    expect(sink.events('snapshot')).toEqual([9]);
  });
});

function setup() {
  const clock = new FakeClock();
  const resilience = new Resilience({
    clock,
    policies: [
      new ResiliencePolicy({
        name: 'guarded',
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
  });
  const hub = new DashboardHub(resilience, 1000);
  return { clock, resilience, hub };
}

describe('DashboardHub', () => {
  it('computes one snapshot per interval however many viewers, and runs its timer only while someone watches', async () => {
    const { clock, hub } = setup();
    expect(clock.pendingTimers()).toBe(0);
    const sinks = Array.from({ length: 5 }, () => new FakeSink());
    const detach = sinks.map((s) => hub.attach(new SseViewer(s)));
    await flushMicrotasks();
    expect(hub.computations).toBe(1); // the first viewer's snapshot at once; the others get the same one
    expect(sinks.map((s) => s.events('snapshot').length)).toEqual([1, 1, 1, 1, 1]);
    await clock.advance(3000);
    expect(hub.computations).toBe(4);
    expect(sinks.map((s) => s.events('snapshot').length)).toEqual([4, 4, 4, 4, 4]);
    expect(sinks[0]!.frames.filter((f) => f.startsWith('event: snapshot'))).toEqual(
      sinks[4]!.frames.filter((f) => f.startsWith('event: snapshot')),
    );
    detach.forEach((d) => d());
    expect(hub.viewers).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
    await clock.advance(5000);
    expect(hub.computations).toBe(4);
  });

  it('sends breaker transitions as they happen and counts them in the next snapshot', async () => {
    const { clock, resilience, hub } = setup();
    const sink = new FakeSink();
    hub.attach(new SseViewer(sink));
    await flushMicrotasks();
    await resilience
      .run(
        async () => {
          throw new Error('down');
        },
        { policy: 'guarded' },
      )
      .catch(() => undefined);
    expect(sink.events('policy')).toEqual([
      expect.objectContaining({
        type: 'breaker_state',
        policy: 'guarded',
        route: null,
        from: 'closed',
        to: 'open',
      }),
    ]);
    await clock.advance(1000);
    const [, snapshot] = sink.events('snapshot') as {
      entries: { policy: string; breaker?: { state: string } }[];
    }[];
    expect(snapshot!.entries.find((e) => e.policy === 'guarded')).toMatchObject({
      breaker: { state: 'open' },
      rates: { failure: 1 },
      breakerHistory: [{ from: 'closed', to: 'open', ago: 1000 }],
    });
    hub.close();
  });

  it('stops listening when the last viewer leaves, and close() ends every stream and refuses new ones', async () => {
    const { clock, resilience, hub } = setup();
    const a = new FakeSink();
    const b = new FakeSink();
    hub.attach(new SseViewer(a));
    hub.attach(new SseViewer(b));
    await flushMicrotasks();
    hub.close();
    expect([a.ended, b.ended]).toEqual([true, true]);
    expect(clock.pendingTimers()).toBe(0);
    await resilience
      .run(
        async () => {
          throw new Error('down');
        },
        { policy: 'guarded' },
      )
      .catch(() => undefined);
    expect(a.events('policy')).toEqual([]); // unsubscribed
    const late = new FakeSink();
    hub.attach(new SseViewer(late));
    expect(late.ended).toBe(true);
    await clock.advance(2000);
    expect(late.frames).toEqual([]);
  });
});
