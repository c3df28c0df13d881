import fc from 'fast-check';
import { FakeClock } from '@ballast/testing';
import { isResilienceError } from '../errors/resilience-error';
import { InMemoryLatencyDigestStore } from '../stores/in-memory-latency-digest-store';
import { stateKey } from '../stores/ports';
import type { ResolvedQueueOptions } from '../strategies/types';
import { isParked, type Admission, type BulkheadOutcome, type ParkedAdmission } from './admission';
import {
  QueuedBulkhead,
  createBulkheadRuntime,
  type BulkheadRuntime,
  type BulkheadRuntimeDeps,
} from './bulkhead-runtime';
import type { ControllerDeps, LimitController } from './limit-controllers';

/**
 * Random interleavings of acquire / cancel / deadline expiry / release(success|failure|neutral) and limit changes
 * (a peer bug: failsafe #393 timed-out waiters eating permits, cockatiel #112 aborted waiters starving the
 * queue, resilience4j #264 double release). A model tracks every handle; after every step (and its microtasks):
 * - permits are conserved: `inUse` equals the slots the model holds, never negative, never above the highest
 *   limit seen, and `≤ limit` whenever the step admitted anyone;
 * - `waiting > 0 ⇒ inUse ≥ limit` (nobody overtakes, no slot idles while someone waits);
 * - parked waiters fail only with `bulkhead_queue_shed` (when shedding is possible) or `deadline_exceeded`
 *   (when their deadline has passed); without CoDel/LIFO/priorities grants come in arrival order;
 * and when the load stops every handle ends released exactly once, rejected or cancelled, and the queue is empty.
 */

/** Runs the promise jobs a step queued (a waiter's `.then` needs one); cheaper than a macrotask per step. */
async function settle(): Promise<void> {
  for (let i = 0; i < 4; i++) await Promise.resolve();
}

type Op =
  | { t: 'acquire'; crit: number; deadline: number | undefined }
  | { t: 'release'; pick: number; outcome: BulkheadOutcome; latency: number }
  | { t: 'cancel'; pick: number }
  | { t: 'race'; release: number; cancel: number }
  | { t: 'advance'; ms: number }
  | { t: 'limit'; value: number }
  | { t: 'retune' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      t: fc.constant('acquire' as const),
      crit: fc.integer({ min: 0, max: 3 }),
      deadline: fc.option(fc.integer({ min: 0, max: 150 }), { nil: undefined }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      t: fc.constant('release' as const),
      pick: fc.nat(),
      outcome: fc.constantFrom<BulkheadOutcome>('success', 'failure', 'neutral'),
      latency: fc.integer({ min: 1, max: 300 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('cancel' as const), pick: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({ t: fc.constant('race' as const), release: fc.nat(), cancel: fc.nat() }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ t: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 120 }) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ t: fc.constant('limit' as const), value: fc.integer({ min: 1, max: 6 }) }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('retune' as const) }) },
);

const queueArb: fc.Arbitrary<ResolvedQueueOptions> = fc.record({
  maxQueue: fc.integer({ min: 0, max: 5 }),
  queueTarget: fc.option(fc.constantFrom(5, 20, 50), { nil: undefined }),
  queueInterval: fc.constant(100),
  queueAdaptiveLifo: fc.boolean(),
  prioritized: fc.boolean(),
});

type Kind = 'manual' | 'aimd' | 'aimdQuantile' | 'gradient';

class ManualLimit implements LimitController {
  limit = 3;
  deps!: ControllerDeps;
  sample(): void {}
}

function build(
  kind: Kind,
  queue: ResolvedQueueOptions,
  max: number,
  clock = new FakeClock(0),
  sheds: number[] = [],
) {
  const deps: BulkheadRuntimeDeps = {
    clock,
    key: stateKey('p', 'r'),
    digest: new InMemoryLatencyDigestStore(),
    policy: 'p',
    route: 'r',
    hooks: { onShed: (c) => sheds.push(c) },
  };
  let manual: ManualLimit | undefined;
  let runtime: BulkheadRuntime;
  if (kind === 'manual') {
    const m = (manual = new ManualLimit());
    runtime = new QueuedBulkhead(queue, deps, (d) => ((m.deps = d), m));
  } else if (kind === 'gradient') {
    runtime = createBulkheadRuntime(
      {
        type: 'gradientBulkhead',
        options: {
          ...queue,
          maxConcurrency: max,
          minConcurrency: 1,
          initialLimit: max,
          rttTolerance: 1.5,
          smoothing: 0.5,
          longWindow: 20,
          headroom: 1,
          // Small windows so the limit actually moves within a short property run.
          windowSize: 2,
          minWindowTime: 0,
          maxWindowTime: 10,
        },
      },
      deps,
    );
  } else {
    runtime = createBulkheadRuntime(
      {
        type: 'adaptiveBulkhead',
        options: {
          ...queue,
          latencyThreshold: 100,
          maxConcurrency: max,
          minConcurrency: 1,
          backoffRatio: 0.5,
          increaseStep: 2,
          cooldown: 20,
          latencyQuantile: kind === 'aimdQuantile' ? 0.5 : undefined,
          window: 5,
        },
      },
      deps,
    );
  }
  return { clock, runtime, manual, sheds };
}

interface Handle {
  readonly seq: number;
  /** The runtime it acquired from: a call releases there even after a retune replaced it (which forwards). */
  readonly owner: BulkheadRuntime;
  readonly deadline: number | undefined;
  status: 'parked' | 'held' | 'released' | 'rejected' | 'cancelled';
  parked: ParkedAdmission | undefined;
  settled: Admission | undefined;
}

async function runScenario(kind: Kind, queue: ResolvedQueueOptions, max: number, ops: Op[]): Promise<void> {
  const built = build(kind, queue, max);
  const { clock, sheds } = built;
  let { runtime, manual } = built;
  const runtimes = [runtime];
  const handles: Handle[] = [];
  const grantOrder: number[] = [];
  const problems: string[] = [];
  let maxLimit = runtime.limit;
  let shedRejections = 0;
  const fifo = queue.queueTarget === undefined && !queue.queueAdaptiveLifo && !queue.prioritized;
  const sheddable = queue.queueTarget !== undefined || queue.prioritized;
  const pick = (status: Handle['status'], n: number) => {
    const xs = handles.filter((h) => h.status === status);
    return xs.length === 0 ? undefined : xs[n % xs.length];
  };
  const release = (h: Handle, outcome: BulkheadOutcome, latency: number) => {
    h.status = 'released';
    h.owner.release(latency, outcome);
    maxLimit = Math.max(maxLimit, runtime.limit);
  };

  const step = async (op: Op): Promise<void> => {
    let admitted = false;
    const grantedBefore = handles.filter((h) => h.settled === true).length;
    switch (op.t) {
      case 'acquire': {
        const deadline = op.deadline === undefined ? undefined : clock.now() + op.deadline;
        const a = runtime.acquire(op.crit, deadline);
        const h: Handle = {
          seq: handles.length,
          owner: runtime,
          deadline,
          status: 'parked',
          parked: undefined,
          settled: undefined,
        };
        handles.push(h);
        if (a === true) {
          h.status = 'held';
          admitted = true;
        } else if (isParked(a)) {
          h.parked = a;
          void a.result.then((v) => {
            h.settled = v;
            // Counted even when the caller cancelled in the same tick: the shed had already happened.
            if (v !== true && v.code === 'bulkhead_queue_shed') shedRejections++;
            if (h.status !== 'parked') return; // cancelled: a late grant was given back by cancel()
            if (v === true) {
              h.status = 'held';
              grantOrder.push(h.seq);
              if (h.deadline !== undefined && clock.now() >= h.deadline)
                problems.push(`#${h.seq} granted after its deadline`);
              return;
            }
            h.status = 'rejected';
            if (v.code === 'bulkhead_queue_shed') {
              if (!sheddable) problems.push(`shed #${h.seq} with neither CoDel nor priorities`);
            } else if (v.code !== 'deadline_exceeded') {
              problems.push(`parked #${h.seq} rejected with ${v.code}`);
            } else if (h.deadline === undefined || clock.now() < h.deadline) {
              problems.push(`#${h.seq} failed deadline_exceeded before its deadline`);
            }
          });
        } else {
          h.status = 'rejected';
          if (a.code !== 'bulkhead_full' && a.code !== 'deadline_exceeded')
            problems.push(`acquire answered ${a.code}`);
        }
        break;
      }
      case 'release': {
        const h = pick('held', op.pick);
        if (h !== undefined) release(h, op.outcome, op.latency);
        break;
      }
      case 'cancel': {
        const h = pick('parked', op.pick);
        if (h !== undefined) {
          h.status = 'cancelled';
          h.parked!.cancel();
        }
        break;
      }
      case 'race': {
        // Release, then a parked caller aborts in the same tick (it may have just been granted the slot).
        const held = pick('held', op.release);
        const parked = pick('parked', op.cancel);
        if (held !== undefined) release(held, 'neutral', 1);
        if (parked !== undefined) {
          parked.status = 'cancelled';
          parked.parked!.cancel();
        }
        break;
      }
      case 'advance':
        await clock.advance(op.ms);
        break;
      case 'retune': {
        // admin.retune: the key gets a fresh runtime (fresh adaptive state) that takes over slots and waiters.
        const next = build(kind, queue, max, clock, sheds);
        runtime.handOver(next.runtime);
        runtime = next.runtime;
        manual = next.manual;
        runtimes.push(runtime);
        maxLimit = Math.max(maxLimit, runtime.limit); // held slots carry over even above the new limit
        break;
      }
      case 'limit':
        if (manual !== undefined) {
          manual.limit = op.value;
          manual.deps.onAsyncChange();
          maxLimit = Math.max(maxLimit, op.value);
        }
        break;
    }
    await settle();
    admitted ||= handles.filter((h) => h.settled === true).length > grantedBefore;
    // Plain checks (Jest's expect costs a stack trace per call; this runs thousands of times).
    const held = handles.filter((h) => h.status === 'held').length;
    const parked = handles.filter((h) => h.status === 'parked').length;
    const { inUse, waiting, limit } = runtime;
    const at = `after ${JSON.stringify(op)}: inUse ${inUse}, waiting ${waiting}, limit ${limit}`;
    if (inUse < 0 || inUse !== held) problems.push(`${at}: model holds ${held}`);
    if (waiting !== parked) problems.push(`${at}: model parks ${parked}`);
    if (inUse > maxLimit) problems.push(`${at}: above the highest limit ${maxLimit}`);
    if (admitted && inUse > limit) problems.push(`${at}: admitted above the limit`);
    if (waiting > 0 && inUse < limit) problems.push(`${at}: a slot idles while someone waits`);
    if (runtimes.some((r) => r.overReleases !== 0)) problems.push(`${at}: over-release`);
    if (problems.length > 0) throw new Error(problems.join('\n'));
  };

  for (const op of ops) await step(op);

  // Load stops: finish everything in flight until nothing is held or parked.
  for (let round = 0; round <= handles.length + 1; round++) {
    const held = handles.filter((h) => h.status === 'held');
    if (held.length === 0) break;
    for (const h of held) release(h, 'success', 10);
    await settle();
  }
  expect([runtime.inUse, runtime.waiting, runtime.overReleases]).toEqual([0, 0, 0]);
  expect(runtimes.map((r) => [r.inUse, r.waiting, r.overReleases])).toEqual(runtimes.map(() => [0, 0, 0]));
  expect(handles.filter((h) => h.status === 'held' || h.status === 'parked')).toEqual([]);
  expect(sheds.length).toBe(shedRejections);
  if (fifo) expect(grantOrder).toEqual([...grantOrder].sort((a, b) => a - b));
  expect(
    handles.filter(
      (h) => h.status === 'rejected' && h.settled !== undefined && !isResilienceError(h.settled),
    ),
  ).toEqual([]);
}

describe('bulkhead runtime: properties of random interleavings', () => {
  const kinds: Kind[] = ['manual', 'aimd', 'aimdQuantile', 'gradient'];
  it.each(kinds)(
    'conserves permits and drains the queue (%s limit)',
    async (kind) => {
      await fc.assert(
        fc.asyncProperty(
          queueArb,
          fc.integer({ min: 1, max: 5 }),
          fc.array(opArb, { minLength: 10, maxLength: 80, size: 'max' }),
          (q, max, ops) => runScenario(kind, q, max, ops),
        ),
        { numRuns: 150 },
      );
    },
    60_000,
  );
});
