import { FakeClock } from '@ballast/testing';
import { setup } from '../__tests__/helpers';
import { policy } from '../__tests__/kit';
import { TimeoutStrategy } from '../strategies/timeout-strategy';
import { bindCriticality, Criticality } from './criticality';
import { withDeadline } from './deadline';
import {
  formatGrpcTimeout,
  grpcPropagation,
  grpcPropagationInterceptor,
  parseGrpcTimeout,
  type GrpcInterceptorOptionsLike,
} from './grpc-propagation';

/** grpc-js's Metadata as far as the helpers use it: a multimap of lower-case keys. */
function metadataStore() {
  const store = new Map<string, string[]>();
  return {
    store,
    metadata: {
      get: (k: string) => store.get(k) ?? [],
      set: (k: string, v: string) => void store.set(k, [v]),
    },
  };
}

/**
 * What the next link of grpc-js's interceptor chain returns, recording what the interceptor does with it: the
 * options it was called with, the start, and cancelWithStatus — which, as in grpc-js, ends the call with that status.
 * (The real grpc-js chain runs in @ballast/nestjs's gRPC e2e suites.)
 */
function nextLink() {
  const seen = {
    options: undefined as GrpcInterceptorOptionsLike | undefined,
    started: 0,
    cancelled: [] as [number, string][],
    statuses: [] as unknown[],
  };
  let listener: { onReceiveStatus?(status: unknown): void } | undefined;
  const call = {
    start(_metadata: unknown, l?: object) {
      seen.started++;
      listener = l as typeof listener;
    },
    cancelWithStatus(code: number, details: string) {
      seen.cancelled.push([code, details]);
      listener?.onReceiveStatus?.({ code, details });
    },
  };
  const nextCall = (options: GrpcInterceptorOptionsLike) => {
    seen.options = options;
    return call;
  };
  const end = (status: unknown) => listener?.onReceiveStatus?.(status);
  return { seen, call, nextCall, end };
}

describe('gRPC helpers', () => {
  it('formats grpc-timeout in gRPC units, never shorter than the budget and at most 8 digits', () => {
    expect([1500, 0, -3, 1.2, 99_999_999, 100_000_000, 1e12, 1e18].map(formatGrpcTimeout)).toEqual([
      '1500m',
      '0m',
      '0m',
      '2m',
      '99999999m',
      '100000S',
      '16666667M',
      '99999999H',
    ]);
  });

  it('parses grpc-timeout, and refuses what is not its format', () => {
    expect(['1500m', '2S', '3M', '1H', '500u', '7n'].map(parseGrpcTimeout)).toEqual([
      1500, 2000, 180_000, 3_600_000, 0.5, 0.000007,
    ]);
    expect(['', '123456789m', '1.5S', '-1m', '5', 'abc', undefined].map(parseGrpcTimeout)).toEqual(
      Array(7).fill(undefined),
    );
  });

  it('round-trips: parse(format(ms)) ≥ ms', () => {
    for (const ms of [0, 1, 999, 1e8 + 1, 3.6e9 * 5])
      expect(parseGrpcTimeout(formatGrpcTimeout(ms))!).toBeGreaterThanOrEqual(ms);
  });

  it('grpcPropagation sets criticality metadata (an existing value wins) and a deadline option', () => {
    const { store, metadata } = metadataStore();
    const clock = new FakeClock();
    const { options } = withDeadline(
      1000,
      () => bindCriticality(Criticality.BEST_EFFORT, () => grpcPropagation(metadata)),
      clock,
    );
    expect(store.get('x-criticality')).toEqual(['best_effort']);
    expect(options.deadline).toBeInstanceOf(Date);
    store.set('x-criticality', ['critical']);
    bindCriticality(Criticality.BEST_EFFORT, () => grpcPropagation(metadata));
    expect(store.get('x-criticality')).toEqual(['critical']);
    expect(grpcPropagation(metadata).options).toEqual({});
  });
});

describe('grpcPropagationInterceptor', () => {
  const interceptor = grpcPropagationInterceptor();

  it('outside any scope passes the call through untouched', () => {
    const link = nextLink();
    const { start } = link.call;
    const options = { deadline: undefined };
    expect(interceptor(options, link.nextCall)).toBe(link.call);
    expect(link.seen.options).toBe(options);
    expect(link.call.start).toBe(start);
  });

  it('sends the remaining budget as the call’s deadline and the criticality as metadata; no timer left', () => {
    const clock = new FakeClock();
    const link = nextLink();
    const { store, metadata } = metadataStore();
    const before = Date.now();
    withDeadline(
      1500,
      () => bindCriticality(Criticality.CRITICAL, () => interceptor({}, link.nextCall).start(metadata, {})),
      clock,
    );
    const deadline = link.seen.options!.deadline as Date;
    expect(deadline.getTime()).toBeGreaterThanOrEqual(before + 1500);
    expect(deadline.getTime()).toBeLessThanOrEqual(Date.now() + 1500);
    expect(store.get('x-criticality')).toEqual(['critical']);
    expect(link.seen.started).toBe(1);
    expect(clock.pendingTimers()).toBe(1);
    link.end({ code: 0 });
    expect(clock.pendingTimers()).toBe(0);
  });

  it('the caller’s own deadline and metadata win; names other than the defaults are honoured', () => {
    const clock = new FakeClock();
    const link = nextLink();
    const { store, metadata } = metadataStore();
    metadata.set('x-prio', 'best_effort');
    const own = new Date(Date.now() + 60_000);
    withDeadline(
      100,
      () =>
        bindCriticality(Criticality.CRITICAL, () =>
          grpcPropagationInterceptor({ criticality: 'X-Prio' })({ deadline: own }, link.nextCall).start(
            metadata,
          ),
        ),
      clock,
    );
    expect(link.seen.options!.deadline).toBe(own);
    expect(store.get('x-prio')).toEqual(['best_effort']);
    expect(store.has('x-criticality')).toBe(false);
  });

  it('cancels the call with DEADLINE_EXCEEDED when the ambient deadline passes on its clock', async () => {
    const clock = new FakeClock();
    const link = nextLink();
    const statuses: unknown[] = [];
    withDeadline(
      300,
      () =>
        interceptor({}, link.nextCall).start(metadataStore().metadata, {
          onReceiveStatus: (s: unknown) => statuses.push(s),
        }),
      clock,
    );
    await clock.advance(299);
    expect(link.seen.cancelled).toEqual([]);
    await clock.advance(1);
    expect(link.seen.cancelled.map(([code]) => code)).toEqual([4]);
    expect(statuses).toEqual([expect.objectContaining({ code: 4 })]); // the caller hears the status, once
    expect(clock.pendingTimers()).toBe(0);
  });

  it('cancels the call with CANCELLED when the ambient call aborts; at once when it already has', async () => {
    const { resilience, clock } = setup([policy('p', [new TimeoutStrategy({ timeout: 50 })])]);
    const link = nextLink();
    const late = nextLink();
    let lateDone!: () => void;
    const lateStarted = new Promise<void>((resolve) => (lateDone = resolve));
    const call = resilience.run(
      async (ctx) => {
        interceptor({}, link.nextCall).start(metadataStore().metadata);
        await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
        // still inside the (now aborted) call: a call made from here is cancelled as soon as it starts
        interceptor({}, late.nextCall).start(metadataStore().metadata);
        lateDone();
      },
      { policy: 'p' },
    );
    const failed = expect(call).rejects.toMatchObject({ code: 'attempt_timeout' });
    await clock.advance(50);
    await failed;
    await lateStarted;
    expect(link.seen.cancelled.map(([code]) => code)).toEqual([1]);
    expect(late.seen.started).toBe(1);
    expect(late.seen.cancelled.map(([code]) => code)).toEqual([1]);
  });
});
