import { FakeClock, flushMicrotasks } from '@ballast/testing';
import { isResilienceError } from '../errors/resilience-error';
import { InMemoryLatencyDigestStore } from '../stores/in-memory-latency-digest-store';
import { stateKey } from '../stores/ports';
import type { ResolvedQueueOptions } from '../strategies/types';
import { isParked, type Admission } from './admission';
import { createBulkheadRuntime } from './bulkhead-runtime';

/**
 * One deterministic scenario per queue mode, every expected grant and shed worked out by hand in the comments
 * (CoDel as in Fail at Scale: the queue is congested when it has not been empty for `interval` — found empty by a
 * release that finds nobody waiting, or drained by serving its last waiter with nothing shed and no arrival within
 * `target` (at once without one); being emptied by shedding does not count, and a new or drained queue's first
 * arrival starts a calm interval. A pop sheds every waiter whose sojourn is strictly
 * above its allowance — `target` when congested, `interval` otherwise, times 0.25/0.5/1/2 per tier when
 * prioritized — then serves the oldest of the highest non-empty tier, or the newest under adaptive LIFO while
 * congested). One slot (maxConcurrency 1) throughout, so each release hands over exactly one slot.
 */

const B = 0; // BEST_EFFORT
const D = 1; // DEGRADED
const N = 2; // NORMAL
const C = 3; // CRITICAL

function scenario(queue: Partial<ResolvedQueueOptions>) {
  const clock = new FakeClock(0);
  const events: string[] = [];
  const runtime = createBulkheadRuntime(
    {
      type: 'bulkhead',
      options: {
        maxConcurrency: 1,
        maxQueue: 10,
        queueTarget: undefined,
        queueInterval: 100,
        queueAdaptiveLifo: false,
        prioritized: false,
        ...queue,
      },
    },
    {
      clock,
      key: stateKey('q', undefined),
      digest: new InMemoryLatencyDigestStore(),
      policy: 'q',
      route: undefined,
      hooks: {
        onShed: (criticality, sojourn) => events.push(`onShed(${criticality},${sojourn})@${clock.now()}`),
      },
    },
  );
  const outcome = (name: string) => (v: Admission) =>
    events.push(`${name} ${v === true ? 'granted' : v.code}@${clock.now()}`);

  return {
    runtime,
    events,
    /** Moves the clock to `t` (absolute ms). */
    at: async (t: number) => {
      await clock.advance(t - clock.now());
    },
    arrive: (name: string, criticality = N) => {
      const a = runtime.acquire(criticality, undefined);
      if (a === true) events.push(`${name} admitted@${clock.now()}`);
      else if (isParked(a)) void a.result.then(outcome(name));
      else if (isResilienceError(a)) events.push(`${name} ${a.code}@${clock.now()}`);
    },
    release: async () => {
      runtime.release(1, 'success');
      await flushMicrotasks();
    },
  };
}

describe('queue modes: deterministic scenarios', () => {
  it('FIFO (no CoDel): arrival order, a full queue refuses, nothing is shed', async () => {
    // maxQueue 3. t=0 A runs; W1, W2, W3 park; W4 finds the queue full → bulkhead_full.
    // Each release hands the slot to the oldest waiter: W1@100, W2@200, W3@300.
    const s = scenario({ maxQueue: 3 });
    s.arrive('A');
    s.arrive('W1');
    await s.at(10);
    s.arrive('W2');
    await s.at(20);
    s.arrive('W3');
    s.arrive('W4');
    for (const t of [100, 200, 300]) {
      await s.at(t);
      await s.release();
    }
    expect(s.events).toEqual([
      'A admitted@0',
      'W4 bulkhead_full@20',
      'W1 granted@100',
      'W2 granted@200',
      'W3 granted@300',
    ]);
  });

  it('CoDel (target 10, interval 100): tolerates a burst, trims a standing queue, recovers once idle', async () => {
    // t=0   A runs; W1 parks (a new queue is idle: this push sets lastEmpty = 0). t=20 W2 parks.
    // t=50  release: congested? 50 − 0 < 100 → no, allowance = interval 100; W1 (50), W2 (30) fine → W1.
    // t=60  W3 parks. t=125 W4 parks. (No release has found the queue empty since t=0.)
    // t=130 release: congested (130 − 0 ≥ 100) → allowance = target 10:
    //       W2 sojourn 110 > 10 → shed; W3 70 > 10 → shed; W4 5 ≤ 10 → W4 served. The queue is now empty, but
    //       emptied by serving, not found empty: lastEmpty stays 0, still congested.
    // t=135 W5 parks (lastEmpty still 0).
    // t=200 release: congested → allowance 10: W5 sojourn 65 > 10 → shed. The slot stays free (this release found
    //       a waiter, so it is not an idle look either).
    // t=210 W6: free slot, empty queue → admitted at once.  t=220 W7 parks (still congested).
    // t=230 release: congested → allowance 10: W7 sojourn 10 is not > 10 → served.
    // t=240 release: nobody waits → the slot goes idle: lastEmpty = 240, queue idle.
    // t=250 W8 admitted at once. t=260 W9 parks: ends the idle period, lastEmpty = 260.
    // t=330 release: 330 − 260 = 70 < 100 → calm, allowance 100 → W9 (sojourn 70) served: recovered.
    const s = scenario({ queueTarget: 10 });
    s.arrive('A');
    s.arrive('W1');
    await s.at(20);
    s.arrive('W2');
    await s.at(50);
    await s.release();
    await s.at(60);
    s.arrive('W3');
    await s.at(125);
    s.arrive('W4');
    await s.at(130);
    await s.release();
    await s.at(135);
    s.arrive('W5');
    await s.at(200);
    await s.release();
    await s.at(210);
    s.arrive('W6');
    await s.at(220);
    s.arrive('W7');
    await s.at(230);
    await s.release();
    await s.at(240);
    await s.release();
    await s.at(250);
    s.arrive('W8');
    await s.at(260);
    s.arrive('W9');
    await s.at(330);
    await s.release();
    expect(s.events).toEqual([
      'A admitted@0',
      'W1 granted@50',
      'onShed(2,110)@130',
      'onShed(2,70)@130',
      'W2 bulkhead_queue_shed@130', // rejected at the time of the pop that shed it
      'W3 bulkhead_queue_shed@130',
      'W4 granted@130',
      'onShed(2,65)@200', // a standing queue stays congested after emptying itself
      'W5 bulkhead_queue_shed@200',
      'W6 admitted@210',
      'W7 granted@230',
      'W8 admitted@250',
      'W9 granted@330',
    ]);
    expect([s.runtime.inUse, s.runtime.waiting]).toEqual([1, 0]);
  });

  it('adaptive LIFO (no CoDel): FIFO until congested, newest first while congested, FIFO again once drained', async () => {
    // t=0 A runs; W1 parks (lastEmpty = 0); W2 @10; W3 @20.
    // t=50  release: 50 < 100 → not congested → oldest: W1.       t=60 W4, t=70 W5 park.
    // t=120 release: congested (120 ≥ 100) → newest: W5.  t=130 → W4.  t=140 → W3.  t=150 → W2 (the queue is
    //       drained by serving its last waiter with nothing shed; without a target that counts at once).
    // t=152 W6 parks (ends the drained period: lastEmpty = 152); t=154 W7.  t=160 release: calm → oldest: W6.
    //       t=170 → W7.
    // t=180 release: nobody waits → idle, lastEmpty = 180.  t=185 X admitted at once.
    // t=190 W8 parks (ends the idle period: lastEmpty = 190); t=195 W9.
    // t=200 release: 10 < 100 → calm → oldest: W8.  t=210 → W9.
    const s = scenario({ queueAdaptiveLifo: true });
    s.arrive('A');
    s.arrive('W1');
    await s.at(10);
    s.arrive('W2');
    await s.at(20);
    s.arrive('W3');
    await s.at(50);
    await s.release();
    await s.at(60);
    s.arrive('W4');
    await s.at(70);
    s.arrive('W5');
    for (const t of [120, 130, 140, 150]) {
      await s.at(t);
      await s.release();
    }
    await s.at(152);
    s.arrive('W6');
    await s.at(154);
    s.arrive('W7');
    for (const t of [160, 170, 180]) {
      await s.at(t);
      await s.release();
    }
    await s.at(185);
    s.arrive('X');
    await s.at(190);
    s.arrive('W8');
    await s.at(195);
    s.arrive('W9');
    for (const t of [200, 210]) {
      await s.at(t);
      await s.release();
    }
    expect(s.events.filter((e) => e.includes('granted') || e.includes('admitted'))).toEqual([
      'A admitted@0',
      'W1 granted@50',
      'W5 granted@120',
      'W4 granted@130',
      'W3 granted@140',
      'W2 granted@150',
      'W6 granted@160',
      'W7 granted@170',
      'X admitted@185',
      'W8 granted@200',
      'W9 granted@210',
    ]);
    expect(s.events.some((e) => e.includes('shed'))).toBe(false);
  });

  it('prioritized with CoDel (target 20, interval 100): displacement, strict priority, tier-scaled allowances', async () => {
    // maxQueue 4. Allowances ×0.25/0.5/1/2 (B/D/N/C): not congested 25/50/100/200, congested 5/10/20/40.
    // t=0   A runs; N1, B2, D3, N4 park (lastEmpty = 0); the queue is full.
    // t=10  C5 arrives at a full queue → displaces the lowest tier, B2 → onShed(0, 10).
    //       B6 arrives: nothing below BEST_EFFORT to displace → bulkhead_full.
    // t=50  release: not congested. D3 sojourn 50 is not > 50 → kept. Highest tier first: C5.
    // t=60  release: not congested. D3 sojourn 60 > 50 → shed → onShed(1, 60). Highest tier left is NORMAL,
    //       oldest first: N1.
    // t=95  N7 and C8 park. Queue: N4(0), N7(95), C8(95).
    // t=125 release: congested (not found empty since t=0). N4 sojourn 125 > 20 → shed; N7 30 > 20 → shed; C8
    //       30 ≤ 40 → served. Sheds come lowest tier first, oldest first. Emptied by serving: still congested.
    // t=130 N9 parks. t=200 release: still congested → N9 (70 > 20) shed; the slot stays free.
    // t=205 X admitted at once. t=215 release: nobody waits → idle, lastEmpty = 215. t=220 Y admitted at once.
    // t=230 N10 parks (lastEmpty = 230). t=300 release: 70 < 100, not congested → N10 (70 ≤ 100) served.
    const s = scenario({ maxQueue: 4, queueTarget: 20, prioritized: true });
    s.arrive('A');
    s.arrive('N1', N);
    s.arrive('B2', B);
    s.arrive('D3', D);
    s.arrive('N4', N);
    await s.at(10);
    s.arrive('C5', C);
    s.arrive('B6', B);
    await s.at(50);
    await s.release();
    await s.at(60);
    await s.release();
    await s.at(95);
    s.arrive('N7', N);
    s.arrive('C8', C);
    await s.at(125);
    await s.release();
    await s.at(130);
    s.arrive('N9', N);
    await s.at(200);
    await s.release();
    await s.at(205);
    s.arrive('X', N);
    await s.at(215);
    await s.release();
    await s.at(220);
    s.arrive('Y', N);
    await s.at(230);
    s.arrive('N10', N);
    await s.at(300);
    await s.release();
    expect(s.events).toEqual([
      'A admitted@0',
      'onShed(0,10)@10',
      'B6 bulkhead_full@10',
      'B2 bulkhead_queue_shed@10',
      'C5 granted@50',
      'onShed(1,60)@60',
      'D3 bulkhead_queue_shed@60',
      'N1 granted@60',
      'onShed(2,125)@125',
      'onShed(2,30)@125',
      'N4 bulkhead_queue_shed@125',
      'N7 bulkhead_queue_shed@125',
      'C8 granted@125',
      'onShed(2,70)@200',
      'N9 bulkhead_queue_shed@200',
      'X admitted@205',
      'Y admitted@220',
      'N10 granted@300',
    ]);
  });
});
