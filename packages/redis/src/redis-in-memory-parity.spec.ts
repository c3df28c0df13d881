import {
  CircuitStateMachine,
  stateKey,
  type BreakerAdmission,
  type BreakerOutcome,
  type BreakerParams,
  type BreakerPermit,
  type StateKey,
} from '@ballast/core';
import { seededRandom } from '@ballast/testing';
import type { Redis } from 'ioredis';
import {
  RUN_REDIS_TESTS,
  cleanUp,
  newClient,
  reportRedisUnreachable,
  requireRedis,
  uniquePrefix,
} from './__tests__/redis-test-env';
import { RedisCircuitBreakerStore } from './redis-circuit-breaker-store';

// The breaker script is core's pure CircuitStateMachine on the server (the in-memory store is one machine per key).
// These tests hold the two side by side on the caller's clock (deterministic): the same calls, on seeded traces and
// on hand-written ones, including retunes and clock steps back, must get the same answers.

const BASE: BreakerParams = Object.freeze({
  failureRatio: 0.5,
  samplingWindow: 1000,
  minThroughput: 2,
  breakDuration: 5000,
  halfOpenMaxCalls: 2,
});

/** A copy of the parts of an admission both stores must agree on (lease ids are opaque and may differ). */
function shape(a: BreakerAdmission): Record<string, unknown> {
  return a.admitted
    ? {
        admitted: true,
        state: a.state,
        generation: a.generation,
        probe: a.lease !== undefined,
        t: a.transition,
      }
    : { admitted: false, state: a.state, retryAfter: a.retryAfter, t: a.transition };
}

if (RUN_REDIS_TESTS) {
  describe('RedisCircuitBreakerStore matches core’s CircuitStateMachine', () => {
    jest.setTimeout(60_000);
    const prefix = uniquePrefix('parity');
    let client: Redis;
    beforeAll(async () => {
      client = newClient();
      await requireRedis(client);
    });
    afterAll(() => cleanUp(prefix, [client]));
    const options = { prefix, time: 'caller', commandTimeout: 5000 } as const;
    let n = 0;
    const key = (): StateKey => stateKey(`parity-${++n}`, 'r');

    /** Both breakers, driven in lock step; every answer is compared. */
    function pair() {
      const machine = new CircuitStateMachine();
      const redis = new RedisCircuitBreakerStore(client, options);
      const k = key();
      return {
        /** Acquires on both; answers both permits when admitted. */
        async acquire(p: BreakerParams, now: number): Promise<[BreakerPermit, BreakerPermit] | undefined> {
          const m = machine.acquire(p, now);
          const mShape = shape(m);
          const r = await redis.acquire(k, p, now);
          expect(shape(r)).toEqual(mShape);
          if (!m.admitted || !r.admitted) return undefined;
          return [
            { generation: m.generation, lease: m.lease },
            { generation: r.generation, lease: r.lease },
          ];
        },
        async admit(p: BreakerParams, now: number): Promise<[BreakerPermit, BreakerPermit]> {
          const permits = await this.acquire(p, now);
          if (permits === undefined) throw new Error('expected an admission');
          return permits;
        },
        async record(
          p: BreakerParams,
          permits: [BreakerPermit, BreakerPermit],
          o: BreakerOutcome,
          now: number,
        ) {
          const m = { ...machine.record(p, permits[0], o, now) };
          const r = await redis.record(k, p, permits[1], o, now);
          expect(r).toEqual(m);
          return r;
        },
        /** Both snapshots, compared whole: state, window or what opened it, generation, retryAfter. */
        async inspect(p: BreakerParams, now: number) {
          const m = machine.inspect(p, now);
          expect(await redis.inspect(k, p, now)).toEqual(m);
          return m;
        },
      };
    }

    async function halfOpen(b: ReturnType<typeof pair>, p: BreakerParams, start: number) {
      for (let i = 0; i < p.minThroughput; i++) await b.record(p, await b.admit(p, start), 'failure', start);
      return start + p.breakDuration;
    }

    it('a probe that reports cuts the other probes’ leases to a shortened breakDuration (a retune)', async () => {
      const b = pair();
      const t0 = await halfOpen(b, BASE, 1_000_000);
      const first = await b.admit(BASE, t0);
      const second = await b.admit(BASE, t0);
      // retuned: breakDuration 5 s → 1 s; the second probe reports at once, the first never does
      const short = { ...BASE, breakDuration: 1000 };
      await b.record(short, second, 'success', t0);
      // the first probe's lease was cut to t0 + 1 s when the second reported: its slot is free again
      expect(await b.acquire(short, t0 + 1000)).toBeDefined();
      expect((await b.record(short, first, 'failure', t0 + 1000)).state).toBe('half_open');
    });

    it('a lease a report found expired stays reclaimed after the clock steps back (its late outcome is ignored)', async () => {
      const b = pair();
      const t0 = await halfOpen(b, BASE, 2_000_000);
      const lost = await b.admit(BASE, t0);
      const late = await b.admit(BASE, t0);
      // both leases have expired when the second probe reports (too late, ignored), which reclaims both
      await b.record(BASE, late, 'success', t0 + BASE.breakDuration);
      // the clock (Redis TIME) steps back a minute; the lost probe's failure must not re-open the breaker
      expect(await b.record(BASE, lost, 'failure', t0 + BASE.breakDuration - 60_000)).toEqual({
        state: 'half_open',
        transition: undefined,
      });
    });

    it('grows the break per failed half-open period, caps it and resets it on close, as the machine does', async () => {
      const b = pair();
      const p: BreakerParams = { ...BASE, breakDuration: 1000, maxBreakDuration: 3500, halfOpenMaxCalls: 1 };
      let now = await halfOpen(b, p, 3_000_000);
      for (const expected of [2000, 3500, 3500]) {
        await b.record(p, await b.admit(p, now), 'failure', now);
        expect(await b.inspect(p, now)).toMatchObject({ state: 'open', retryAfter: expected });
        expect(await b.acquire(p, now + expected - 1)).toBeUndefined();
        now += expected;
      }
      expect((await b.record(p, await b.admit(p, now), 'success', now)).state).toBe('closed');
      for (let i = 0; i < p.minThroughput; i++) await b.record(p, await b.admit(p, now), 'failure', now);
      expect(await b.inspect(p, now)).toMatchObject({ state: 'open', retryAfter: 1000 });
    });

    it('gives the same answers on seeded random sequences with retunes and clock steps back', async () => {
      const plist: BreakerParams[] = [
        {
          failureRatio: 0.5,
          samplingWindow: 1000,
          minThroughput: 3,
          breakDuration: 500,
          halfOpenMaxCalls: 2,
        },
        {
          failureRatio: 0.3,
          samplingWindow: 2000,
          minThroughput: 2,
          breakDuration: 300,
          halfOpenMaxCalls: 1,
        },
        { failureRatio: 1, samplingWindow: 700, minThroughput: 4, breakDuration: 900, halfOpenMaxCalls: 3 },
        // growing breaks (SPEC §14.3), a fractional multiplier and a retune of the cap among them
        {
          failureRatio: 0.5,
          samplingWindow: 1000,
          minThroughput: 2,
          breakDuration: 200,
          halfOpenMaxCalls: 1,
          maxBreakDuration: 1700,
          breakDurationMultiplier: 1.5,
        },
        {
          failureRatio: 0.5,
          samplingWindow: 1000,
          minThroughput: 2,
          breakDuration: 250,
          halfOpenMaxCalls: 2,
          maxBreakDuration: 800,
        },
      ];
      const outcomes: BreakerOutcome[] = ['failure', 'success', 'release'];
      for (let seed = 1; seed <= 40; seed++) {
        const random = seededRandom(seed);
        const b = pair();
        let now = 1_000_000 + Math.floor(random() * 1_000_000);
        let p = plist[0]!;
        const held: Array<[BreakerPermit, BreakerPermit]> = [];
        for (let i = 0; i < 120; i++) {
          if (random() < 0.03) p = plist[Math.floor(random() * plist.length)]!;
          now += random() < 0.05 ? -Math.floor(random() * 3000) : Math.floor(random() * 150);
          const op = random();
          if (op < 0.5 || held.length === 0) {
            const permits = await b.acquire(p, now);
            if (permits !== undefined) held.push(permits);
          } else {
            const [permits] = held.splice(Math.floor(random() * held.length), 1);
            await b.record(p, permits!, outcomes[Math.floor(random() * 3)]!, now);
          }
          await b.inspect(p, now);
        }
      }
    });
  });
} else {
  describe('RedisCircuitBreakerStore matches core’s CircuitStateMachine', () => reportRedisUnreachable());
}
