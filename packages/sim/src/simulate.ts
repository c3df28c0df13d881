import {
  Criticality,
  Resilience,
  ResilienceError,
  bindCriticality,
  withDeadline,
  type CallContext,
  type ResilienceEvent,
  type RunOptions,
} from '@ballast/core';
import { Downstream, DownstreamError } from './downstream';
import { PoissonArrivals, type Arrival } from './load';
import { RequestLog } from './request-log';
import { randomStream } from './seeded-random';
import type {
  EventTallies,
  ReplicaTrajectories,
  Samples,
  SimulationOptions,
  SimulationResult,
} from './simulation-types';
import { VirtualClock } from './virtual-clock';
import { writeDefaultCharts } from './default-charts';

/** Codes of admission refusals (a request Ballast turned away, as opposed to one that failed). */
const REJECTION_CODES: ReadonlySet<string> = new Set([
  'rate_limited',
  'adaptive_throttle',
  'bulkhead_full',
  'bulkhead_queue_shed',
  'bulkhead_queue_timeout',
  'circuit_open',
  'resilience_forced_open',
  'resilience_store_unavailable',
]);

const BREAKER_LEVEL: Readonly<Record<string, number>> = { closed: 0, half_open: 1, open: 2 };

function check(violations: string[], ok: boolean, message: string): void {
  if (!ok) violations.push(message);
}

/** Classifies how a request ended, as a log label. */
function outcomeLabel(err: unknown): string {
  if (err instanceof ResilienceError) {
    return `${REJECTION_CODES.has(err.code) ? 'rejected' : 'failed'}:${err.code}`;
  }
  if (err instanceof DownstreamError) return `failed:downstream_${err.reason}`;
  return `failed:${err instanceof Error ? err.name : typeof err}`;
}

function emptyTrajectories(): ReplicaTrajectories {
  return { limit: [], inUse: [], waiting: [], breaker: [], hedgeDelay: [], throttleProbability: [] };
}

/**
 * Runs `replicas` instances of the real `Resilience` executor, each with the same policy, against one shared
 * downstream under open-loop Poisson load, in virtual time. Deterministic: the same options and seed give the
 * same result, bit for bit.
 */
export async function simulate(options: SimulationOptions): Promise<SimulationResult> {
  const replicas = options.replicas ?? 1;
  const slo = options.slo ?? 1000;
  const interval = options.sampleInterval ?? 250;
  const settle = options.settle ?? 5000;
  const fanOut = options.fanOut ?? 1;
  const violations: string[] = [];
  check(
    violations,
    Number.isInteger(replicas) && replicas >= 1 && replicas <= 65535,
    `replicas must be an integer in [1, 65535], got ${replicas}`,
  );
  check(
    violations,
    Number.isFinite(options.duration) && options.duration > 0,
    `duration must be > 0 ms, got ${options.duration}`,
  );
  check(violations, Number.isFinite(options.seed), `seed must be a finite number, got ${options.seed}`);
  check(violations, Number.isInteger(fanOut) && fanOut >= 1, `fanOut must be an integer ≥ 1, got ${fanOut}`);
  check(violations, slo > 0, `slo must be > 0 ms, got ${slo}`);
  check(violations, interval > 0, `sampleInterval must be > 0 ms, got ${interval}`);
  check(violations, settle >= 0, `settle must be ≥ 0 ms, got ${settle}`);
  if (violations.length > 0) throw new RangeError(`simulate: ${violations.join('; ')}`);

  const wallStart = performance.now();
  const clock = new VirtualClock(options.drain === undefined ? {} : { drain: options.drain });
  const seed = options.seed;
  const downstream = new Downstream(options.downstream, clock, randomStream(seed, 'downstream'));
  const capacity = downstream.capacity();
  const arrivals = new PoissonArrivals(options.load, replicas, randomStream(seed, 'arrivals'));
  const policy = options.policy;
  const log = new RequestLog();
  const events: EventTallies = {
    breakerTransitions: [],
    retries: 0,
    hedges: 0,
    hedgeWins: 0,
    throttleRejects: 0,
    attemptTimeouts: 0,
    queueShedsByCriticality: [0, 0, 0, 0],
    shadowRejected: {},
    chaosInjected: { fault: 0, latency: 0, outcome: 0 },
  };
  const instances = Array.from({ length: replicas }, (_, i) => {
    const r = new Resilience({ policies: [policy], clock, random: randomStream(seed, `replica-${i}`) });
    r.on((e: ResilienceEvent) => {
      switch (e.type) {
        case 'breaker_state':
          events.breakerTransitions.push({ t: clock.now(), replica: i, from: e.from, to: e.to });
          break;
        case 'retry':
          events.retries++;
          break;
        case 'hedge_attempt':
          events.hedges++;
          break;
        case 'hedge_won':
          events.hedgeWins++;
          break;
        case 'throttle_reject':
          events.throttleRejects++;
          break;
        case 'attempt_timeout':
          events.attemptTimeouts++;
          break;
        case 'rejected':
          if (e.shadow === true) events.shadowRejected[e.code] = (events.shadowRejected[e.code] ?? 0) + 1;
          break;
        case 'chaos_injected':
          events.chaosInjected[e.injection]++;
          break;
        case 'bulkhead_shed':
          events.queueShedsByCriticality[e.criticality]!++;
          break;
        default:
          break;
      }
    });
    return r;
  });

  // Reading ctx.signal allocates an AbortController; only do it when something can abort the attempt.
  const abortable =
    policy.timeout !== undefined || policy.hedge !== undefined || options.load.deadline !== undefined;
  const runOptions: RunOptions<void> = { policy: policy.name };
  const admitted = (id: number): void => {
    if (Number.isNaN(log.admitted[id])) log.admitted[id] = clock.now();
    log.attempts[id]!++;
  };
  const deadline = options.load.deadline;
  let inflight = 0;
  const success = RequestLog.SUCCESS;

  const onArrival = (a: Arrival): void => {
    const id = log.add(clock.now(), a.replica, a.criticality);
    const r = instances[a.replica]!;
    inflight++;
    const call = abortable
      ? (ctx: CallContext): Promise<void> => {
          admitted(id);
          return downstream.handle(ctx.signal);
        }
      : (): Promise<void> => {
          admitted(id);
          return downstream.handle();
        };
    const run =
      fanOut === 1
        ? (): Promise<void> => r.run(call, runOptions)
        : (): Promise<void> => {
            const leaves: Promise<void>[] = [];
            for (let i = 0; i < fanOut; i++) leaves.push(r.run(call, runOptions));
            return Promise.all(leaves).then(() => undefined);
          };
    const bounded = deadline === undefined ? run : (): Promise<void> => withDeadline(deadline, run, clock);
    const p = a.criticality === Criticality.NORMAL ? bounded() : bindCriticality(a.criticality, bounded);
    p.then(
      () => {
        inflight--;
        log.settle(id, clock.now(), success);
      },
      (err: unknown) => {
        inflight--;
        log.settle(id, clock.now(), log.label(outcomeLabel(err)));
      },
    );
  };

  const samples: Samples = {
    t: [],
    downstream: [],
    queued: [],
    busy: [],
    capacity: [],
    inflight: [],
    replicas: instances.map(() => emptyTrajectories()),
  };
  const end = options.duration + settle;
  const sample = (): void => {
    const k = samples.t.length;
    samples.t.push(clock.now());
    samples.downstream.push({ ...downstream.counters });
    samples.queued.push(downstream.queued);
    samples.busy.push(downstream.busy);
    samples.capacity.push(downstream.capacity());
    samples.inflight.push(inflight);
    instances.forEach((r, i) => {
      const tr = samples.replicas[i]!;
      for (const arr of Object.values(tr) as (number | null)[][]) arr.push(null);
      void r.admin.inspect({ policy: policy.name }).then((snaps) => {
        const s = snaps.find((x) => x.route === undefined);
        if (s === undefined) return;
        tr.limit[k] = s.concurrencyLimit ?? null;
        tr.inUse[k] = s.inUse ?? null;
        tr.waiting[k] = s.waiting ?? null;
        tr.breaker[k] = s.breaker === undefined ? null : (BREAKER_LEVEL[s.breaker.state] ?? null);
        tr.hedgeDelay[k] = s.hedgeDelay ?? null;
        tr.throttleProbability[k] = s.throttleRejectionProbability ?? null;
      });
    });
    if (clock.now() + interval <= end) clock.setTimeout(sample, interval);
  };

  sample();
  arrivals.start(clock, options.duration, onArrival);
  await clock.runUntil(end);

  const result: SimulationResult = {
    seed,
    duration: options.duration,
    replicas,
    slo,
    sampleInterval: interval,
    capacity,
    log,
    samples,
    events,
    eventsFired: clock.fired,
    wallMs: performance.now() - wallStart,
    charts: [],
  };
  if (options.charts !== undefined) {
    result.charts.push(
      ...writeDefaultCharts(result, options.charts.dir, options.charts.name ?? 'simulation'),
    );
  }
  return result;
}
