import { FakeClock, seededRandom } from '@ballast/testing';
import { InMemoryLatencyDigestStore } from '../stores/in-memory-latency-digest-store';
import { stateKey } from '../stores/ports';
import { isParked, type Admission } from './admission';
import { createBulkheadRuntime } from './bulkhead-runtime';

/**
 * The load-shedding guarantee (issue 5; Fail at Scale's criticality tiers): under 3× overload with `prioritized`
 * on and CoDel off, no CRITICAL request is ever shed while lower tiers exist in the queue. Sheds then only come
 * from a full queue displacing its lowest-criticality waiter for a strictly more critical arrival, so we also
 * check that every shed waiter was of the lowest tier present.
 *
 * Discrete-event simulation on a FakeClock: arrivals with exponential inter-arrival times (seeded), a fixed
 * service time, 10 slots: capacity 100 req/s against 300 req/s offered.
 */

const CRITICAL = 3;
const SLOTS = 10;
const SERVICE_MS = 100;
const OFFERED_PER_S = 300;
const DURATION_MS = 5000;

interface Request {
  readonly id: number;
  readonly criticality: number;
}

function simulate(seed: number) {
  const clock = new FakeClock(0);
  const random = seededRandom(seed);
  const parked = new Map<number, Request>(); // the test's view of the queue
  const stats = {
    arrivals: 0,
    admitted: [0, 0, 0, 0],
    shed: [0, 0, 0, 0],
    full: [0, 0, 0, 0],
    violations: [] as string[],
    shedWhileLowerQueued: 0,
  };
  let arriving: Request | undefined;

  const runtime = createBulkheadRuntime(
    {
      type: 'bulkhead',
      options: {
        maxConcurrency: SLOTS,
        maxQueue: 20,
        queueTarget: undefined,
        queueInterval: 100,
        queueAdaptiveLifo: false,
        prioritized: true,
      },
    },
    {
      clock,
      key: stateKey('checkout', undefined),
      digest: new InMemoryLatencyDigestStore(),
      policy: 'checkout',
      route: undefined,
      hooks: {
        // Called synchronously inside acquire(), before the shed waiter's promise settles: `parked` is exactly the
        // queue as it was when the arrival displaced someone.
        onShed: (criticality) => {
          stats.shed[criticality]!++;
          const tiers = [...parked.values()].map((r) => r.criticality);
          const lowest = Math.min(...tiers);
          if (criticality !== lowest)
            stats.violations.push(`shed tier ${criticality} while tier ${lowest} queued`);
          if (criticality === CRITICAL && tiers.some((c) => c < CRITICAL))
            stats.violations.push(`CRITICAL shed at ${clock.now()} while lower tiers queued`);
          if (arriving === undefined || arriving.criticality <= criticality)
            stats.violations.push(`displacement by a not strictly more critical arrival at ${clock.now()}`);
          if (criticality < CRITICAL) stats.shedWhileLowerQueued++;
        },
      },
    },
  );

  const serve = (): void => {
    const admittedAt = clock.now();
    clock.setTimeout(() => runtime.release(clock.now() - admittedAt, 'success'), SERVICE_MS);
  };

  const arrive = (id: number): void => {
    const u = random();
    // 10% CRITICAL, 30% each of NORMAL, DEGRADED, BEST_EFFORT
    const criticality = u < 0.1 ? 3 : u < 0.4 ? 2 : u < 0.7 ? 1 : 0;
    const request: Request = { id, criticality };
    stats.arrivals++;
    arriving = request;
    const a = runtime.acquire(criticality, undefined);
    arriving = undefined;
    if (a === true) {
      stats.admitted[criticality]!++;
      serve();
    } else if (isParked(a)) {
      parked.set(id, request);
      void a.result.then((v: Admission) => {
        parked.delete(id);
        if (v === true) {
          stats.admitted[criticality]!++;
          serve();
        }
      });
    } else {
      stats.full[criticality]!++;
    }
    const gap = -Math.log(1 - random()) * (1000 / OFFERED_PER_S);
    if (clock.now() + gap < DURATION_MS) clock.setTimeout(() => arrive(id + 1), gap);
  };

  return {
    async run() {
      arrive(0);
      await clock.runAll();
      return { stats, runtime };
    },
  };
}

describe('load-shedding guarantee: prioritized queue, CoDel off, 3× overload', () => {
  it.each([1, 7, 42])(
    'never sheds a CRITICAL request while lower tiers are queued (seed %i)',
    async (seed) => {
      const { stats, runtime } = await simulate(seed).run();
      expect(stats.violations).toEqual([]);
      expect(stats.shed[CRITICAL]).toBe(0);
      // The scenario really is 3× overload and really sheds lower tiers.
      const capacity = (SLOTS * DURATION_MS) / SERVICE_MS;
      expect(stats.arrivals / capacity).toBeGreaterThan(2.5);
      expect(stats.arrivals / capacity).toBeLessThan(3.5);
      expect(stats.shedWhileLowerQueued).toBeGreaterThan(100);
      // CRITICAL work gets through: nearly all of it is admitted while BEST_EFFORT is mostly shed or refused.
      const criticalOffered = stats.admitted[3]! + stats.full[3]!;
      expect(stats.admitted[3]! / criticalOffered).toBeGreaterThan(0.95);
      expect(stats.admitted[0]!).toBeLessThan(stats.shed[0]! + stats.full[0]!);
      // The load stopped and every slot came back.
      expect([runtime.inUse, runtime.waiting, runtime.overReleases]).toEqual([0, 0, 0]);
    },
  );
});
