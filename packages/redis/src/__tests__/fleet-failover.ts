import { stateKey, type BreakerAdmission } from '@ballast/core';
import { Replica } from './fleet-replica';

/*
 * The body of the multi-process failover runs (`npm run test:redis-fleet`, src/*.fleet-failover.spec.ts): a fleet of
 * child processes (test/fleet-child.cjs) calls through one breaker and rate limit per policy while a master fails
 * over, then the harness checks what the issue asks (#28): the calls went on, the probe lease was not lost for good,
 * and the fleet rate is exact again.
 */

/** The master about to fail, as the run sees it. */
export interface FailoverTarget {
  /** A route of `policy` whose keys that master holds. */
  routeOn(policy: string): string;
  /** Whether the replica about to be promoted holds `key` yet. */
  replicated(key: string): boolean;
  /** Fails the master over (a crash or a planned failover); resolves once every key is served again. */
  failover(): Promise<void>;
}

type LoadReport = {
  outcomes: Record<'open' | 'strict', Record<string, number>>;
  degraded: Record<'open' | 'strict', number>;
};

/** `count` fleet replicas connected with `connection` (a URL or the child's JSON connection); all ready. */
export async function startFleet(count: number, connection: string, prefix: string): Promise<Replica[]> {
  const fleet = Array.from(
    { length: count },
    () => new Replica({ prefix, commandTimeout: 250 }, { url: connection }),
  );
  await Promise.all(fleet.map((r) => r.ready));
  return fleet;
}

/**
 * One failover under load. `label` keeps this run's keys apart from another's on the same topology; `crash`: the
 * master dies unannounced, so strict calls must have failed with `resilience_store_unavailable` for a while (a
 * planned failover may hand over without a single failed call). `recoverWithin` (ms): for a client that follows the
 * promotion only some time after the topology is whole again (node-redis 6's cluster), every process must answer on
 * the failed-over master's keys within that long before the checks after the failover; without it, at once.
 */
export async function failoverUnderLoad(
  fleet: Replica[],
  prefix: string,
  label: string,
  target: FailoverTarget,
  crash: boolean,
  recoverWithin?: number,
): Promise<void> {
  const [first, second] = [fleet[0]!, fleet[1]!];
  // A breaker in half-open with its one probe lease granted, replicated before the failover, on the caller's clock.
  const B = 60_000;
  const breaker = {
    failureRatio: 0.5,
    samplingWindow: B,
    minThroughput: 1,
    breakDuration: B,
    halfOpenMaxCalls: 1,
  };
  const lease = { policy: `lease-${label}`, route: target.routeOn(`lease-${label}`) };
  await first.call('record-at', {
    key: lease,
    params: breaker,
    admission: { generation: 0 },
    outcome: 'failure',
    now: 1000,
  });
  expect(await first.call('acquire-at', { key: lease, params: breaker, now: 1000 + B })).toMatchObject({
    admitted: true,
    state: 'half_open',
  });
  const leases = `${prefix}:{${stateKey(lease.policy, lease.route).id}}:cbl`;
  for (let i = 0; !target.replicated(leases); i++) {
    expect(i).toBeLessThan(100);
    await new Promise((r) => setTimeout(r, 20));
  }

  // Load on both policies from every process, through the failover and 500 ms past it.
  const routes = { open: target.routeOn('open'), strict: target.routeOn('strict') };
  await Promise.all(fleet.map((r) => r.call('load-start', { routes, concurrency: 2 })));
  let reports: LoadReport[];
  try {
    await new Promise((r) => setTimeout(r, 300));
    await target.failover();
    await new Promise((r) => setTimeout(r, 500));
  } finally {
    reports = await Promise.all(fleet.map((r) => r.call<LoadReport>('load-stop')));
  }
  for (const { outcomes, degraded } of reports) {
    // Under failOpenOnStoreError every call went on; without it, a call either ran or failed typed.
    expect(Object.keys(outcomes.open)).toEqual(['ok']);
    expect(outcomes.strict['ok']).toBeGreaterThan(0);
    for (const outcome of Object.keys(outcomes.strict))
      expect(['ok', 'resilience_store_unavailable']).toContain(outcome);
    if (crash) {
      expect(degraded.open).toBeGreaterThan(0);
      expect(outcomes.strict['resilience_store_unavailable']).toBeGreaterThan(0);
    }
  }

  if (recoverWithin !== undefined) {
    // A read of a key of its own on that master (not the lease's: the checks below own it).
    const probe = { policy: `recover-${label}`, route: target.routeOn(`recover-${label}`) };
    const start = Date.now();
    await Promise.all(
      fleet.map(async (r) => {
        for (;;) {
          try {
            return await r.call('inspect', { key: probe, params: breaker });
          } catch (e) {
            if (Date.now() - start > recoverWithin) throw e;
            await new Promise((r) => setTimeout(r, 100));
          }
        }
      }),
    );
  }

  // The lease outlived the failover: the promoted replica holds it, so no second probe yet …
  expect(await second.call('acquire-at', { key: lease, params: breaker, now: 1001 + B })).toMatchObject({
    admitted: false,
  });
  // … and once it expires, exactly one caller of a stampede over every process gets the next.
  const stampede = (
    await Promise.all(
      fleet.map((r) =>
        r.call<BreakerAdmission[]>('acquire-many-at', {
          key: lease,
          params: breaker,
          now: 1001 + 2 * B,
          count: 20,
        }),
      ),
    )
  ).flat();
  expect(stampede.filter((a) => a.admitted)).toHaveLength(1);

  // The fleet rate is exact again: a fresh bucket of 30 on the failed-over master grants exactly 30 of the
  // 30 concurrent takes each process fires.
  const bucket = { policy: `bucket-${label}`, route: target.routeOn(`bucket-${label}`) };
  const takes = (
    await Promise.all(
      fleet.map((r) =>
        r.call<boolean[]>('take-many', {
          key: bucket,
          params: { permits: 30, per: 3_600_000, burst: 30 },
          count: 30,
        }),
      ),
    )
  ).flat();
  expect(takes.filter(Boolean)).toHaveLength(30);
}
