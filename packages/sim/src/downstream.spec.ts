import { constant, exponential } from './distributions';
import { Downstream, DownstreamError } from './downstream';
import { steps } from './schedule';
import { mulberry32 } from './seeded-random';
import { VirtualClock } from './virtual-clock';

function setup(options: ConstructorParameters<typeof Downstream>[0]) {
  const clock = new VirtualClock();
  const ds = new Downstream(options, clock, mulberry32(1));
  const done: { at: number; ok: boolean; err?: unknown }[] = [];
  const send = (signal?: AbortSignal): void => {
    ds.handle(signal).then(
      () => done.push({ at: clock.now(), ok: true }),
      (err: unknown) => done.push({ at: clock.now(), ok: false, err }),
    );
  };
  return { clock, ds, done, send };
}

describe('Downstream', () => {
  it('serves c requests in parallel and queues the rest FIFO', async () => {
    const { clock, ds, done, send } = setup({ servers: 2, serviceTime: constant(10) });
    for (let i = 0; i < 5; i++) send();
    expect([ds.busy, ds.queued]).toEqual([2, 3]);
    await clock.runUntil(100);
    expect(done.map((d) => d.at)).toEqual([10, 10, 20, 20, 30]);
    expect(ds.counters).toMatchObject({ attempts: 5, successes: 5, failures: 0 });
    expect(ds.counters.busyTime).toBe(50);
    expect(ds.maxQueued).toBe(3);
  });

  it('capacity follows its schedule: an outage queues work, recovery drains it', async () => {
    const { clock, ds, done, send } = setup({
      servers: steps([0, 1], [5, 0], [50, 2]),
      serviceTime: constant(10),
    });
    clock.setTimeout(() => {
      send();
      send();
      send();
    }, 6);
    await clock.runUntil(49);
    expect(done).toHaveLength(0);
    expect(ds.capacity()).toBe(0);
    await clock.runUntil(100);
    expect(done.map((d) => d.at)).toEqual([60, 60, 70]);
  });

  it('fails at the configured error rate with an HTTP-503 error; errorLatency refuses without a server', async () => {
    const { clock, ds, done, send } = setup({
      servers: 1,
      serviceTime: constant(10),
      errorRate: 0.3,
      errorLatency: 1,
    });
    for (let i = 0; i < 2000; i++) send();
    await clock.runUntil(100_000);
    const failed = done.filter((d) => !d.ok);
    expect(failed.length / 2000).toBeGreaterThan(0.26);
    expect(failed.length / 2000).toBeLessThan(0.34);
    expect(failed.every((d) => d.at === 1 && d.err instanceof DownstreamError && d.err.status === 503)).toBe(
      true,
    );
    expect(ds.counters.failures).toBe(failed.length);
  });

  it('honours the caller signal: an aborted request leaves the queue or frees its server at once', async () => {
    const { clock, ds, done, send } = setup({ servers: 1, serviceTime: constant(100) });
    const a = new AbortController();
    const b = new AbortController();
    send(a.signal); // serving
    send(b.signal); // queued
    send(); // queued behind b
    clock.setTimeout(() => b.abort(new Error('gave up')), 10);
    clock.setTimeout(() => a.abort(new Error('timeout')), 20);
    await clock.runUntil(1000);
    expect(done.map((d) => [d.at, d.ok])).toEqual([
      [10, false],
      [20, false],
      [120, true],
    ]);
    expect(ds.counters.abandoned).toBe(2);
    expect(ds.counters.busyTime).toBe(120);
    const pre = new AbortController();
    pre.abort(new Error('already'));
    await expect(ds.handle(pre.signal)).rejects.toThrow('already');
  });

  it('a full queue refuses at once', async () => {
    const { clock, done, send } = setup({ servers: 1, serviceTime: constant(10), maxQueue: 1 });
    send();
    send();
    send();
    await clock.runUntil(100);
    expect(done.map((d) => [d.at, d.ok])).toEqual([
      [0, false],
      [10, true],
      [20, true],
    ]);
    expect((done[0]!.err as DownstreamError).reason).toBe('queue_full');
  });

  it('latencyFactor stretches service times (brown-out) and capacity reports it', async () => {
    const { clock, ds, done, send } = setup({
      servers: 4,
      serviceTime: exponential(10),
      latencyFactor: steps([0, 1], [1000, 3]),
    });
    expect(ds.capacity()).toBe(400);
    clock.setTimeout(() => {
      expect(ds.capacity()).toBeCloseTo(400 / 3, 9);
      send();
    }, 1000);
    await clock.runUntil(5000);
    expect(done).toHaveLength(1);
  });
});
