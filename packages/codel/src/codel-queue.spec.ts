import { CoDelQueue } from './codel-queue';
import { Criticality, isCriticality } from './criticality';

const { CRITICAL } = Criticality;

describe('Criticality', () => {
  it('is the frozen SPEC §11.4 object', () => {
    expect(Criticality).toEqual({ BEST_EFFORT: 0, DEGRADED: 1, NORMAL: 2, CRITICAL: 3 });
    expect(Object.isFrozen(Criticality)).toBe(true);
    expect([0, 1, 2, 3].every(isCriticality)).toBe(true);
    expect([4, -1, 1.5, '2', undefined].some(isCriticality)).toBe(false);
  });
});

describe('CoDelQueue — options', () => {
  it('resolves defaults and freezes them', () => {
    const queue = new CoDelQueue<string>({ maxSize: 4 });
    expect(queue.options).toEqual({
      maxSize: 4,
      target: undefined,
      interval: 100,
      adaptiveLifo: false,
      prioritized: false,
    });
    expect(Object.isFrozen(queue.options)).toBe(true);
  });

  it('reports every violation in one RangeError', () => {
    expect(() => new CoDelQueue({ maxSize: -1, target: 200, interval: 100 })).toThrow(
      'CoDelQueue: maxSize must be an integer ≥ 0, got -1; target must be a finite number of ms ≥ 0 and < interval, got 200',
    );
    expect(
      () =>
        new CoDelQueue({
          maxSize: 1.5,
          interval: 0,
          adaptiveLifo: 'yes' as unknown as boolean,
          prioritized: 1 as unknown as boolean,
        }),
    ).toThrow(
      'CoDelQueue: maxSize must be an integer ≥ 0, got 1.5; interval must be a finite number of ms > 0, got 0; ' +
        'adaptiveLifo must be a boolean, got "yes"; prioritized must be a boolean, got 1',
    );
  });

  it('rejects a criticality outside 0…3 at push', () => {
    const queue = new CoDelQueue<string>({ maxSize: 4 });
    expect(() => queue.push('a', 0, 7 as Criticality)).toThrow(
      'CoDelQueue.push: criticality must be 0, 1, 2 or 3, got 7',
    );
    expect(queue.size).toBe(0);
  });

  it.each([Number.NaN, Infinity, -Infinity])('rejects now = %p at push, pop and idle', (now) => {
    // Accepted, an Infinity or NaN arrival became the last empty instant: the queue never counted as congested,
    // and its waiter (sojourn −∞ or NaN) was never shed and hid the expired waiters behind it, until it drained.
    const queue = new CoDelQueue<string>({ maxSize: 4, target: 10 });
    const message = `now must be a finite number of ms, got ${String(now)}`;
    expect(() => queue.push('x', now)).toThrow(`CoDelQueue.push: ${message}`);
    expect(queue.size).toBe(0);
    expect(() => queue.pop(now)).toThrow(`CoDelQueue.pop: ${message}`);
    expect(() => queue.idle(now)).toThrow(`CoDelQueue.idle: ${message}`);
    queue.push('a', 0);
    queue.push('b', 0);
    expect(() => queue.pop(now)).toThrow(RangeError);
    expect(queue.size).toBe(2);
    expect(queue.pop(5)).toEqual({ item: 'a', shed: [] });
    expect(queue.congested(100)).toBe(true);
    expect(queue.pop(100)).toEqual({ shed: ['b'] });
  });
});

describe('CoDelQueue — FIFO', () => {
  it('serves in arrival order and rejects when full', () => {
    const queue = new CoDelQueue<string>({ maxSize: 3 });
    expect(queue.push('a', 0)).toEqual({ ok: true });
    expect(queue.push('b', 1)).toEqual({ ok: true });
    expect(queue.push('c', 2)).toEqual({ ok: true });
    expect(queue.push('d', 3, CRITICAL)).toEqual({ ok: false }); // not prioritized: criticality is ignored
    expect(queue.size).toBe(3);
    expect(queue.pop(1000).item).toBe('a'); // no target: nothing is ever shed
    expect(queue.pop(1000).item).toBe('b');
    expect(queue.pop(1000)).toEqual({ item: 'c', shed: [] });
    const empty = queue.pop(1000);
    expect(empty.item).toBeUndefined();
    expect(empty.shed).toEqual([]);
    expect(Object.isFrozen(empty.shed)).toBe(true);
  });

  it('admits nothing with maxSize 0', () => {
    const queue = new CoDelQueue<string>({ maxSize: 0, prioritized: true });
    expect(queue.push('a', 0, CRITICAL)).toEqual({ ok: false });
  });

  it('grows past its initial ring capacity and wraps correctly', () => {
    const queue = new CoDelQueue<number>({ maxSize: 100 });
    let next = 0;
    let expected = 0;
    for (let round = 0; round < 10; round++) {
      for (let i = 0; i < 37; i++) queue.push(next++, 0);
      for (let i = 0; i < 30; i++) expect(queue.pop(0).item).toBe(expected++);
    }
    expect(queue.size).toBe(70);
  });

  it('remove() takes out a waiter by identity', () => {
    const queue = new CoDelQueue<{ id: string }>({ maxSize: 5 });
    const [a, b, c] = [{ id: 'a' }, { id: 'b' }, { id: 'c' }];
    for (const w of [a, b, c]) queue.push(w, 0);
    expect(queue.remove(b)).toBe(true);
    expect(queue.remove(b)).toBe(false);
    expect(queue.remove({ id: 'a' })).toBe(false);
    expect(queue.size).toBe(2);
    expect(queue.pop(0).item).toBe(a);
    expect(queue.pop(0).item).toBe(c);
  });

  it('forEach() visits waiters with their enqueue times, oldest first', () => {
    const queue = new CoDelQueue<string>({ maxSize: 5 });
    queue.push('a', 3);
    queue.push('b', 7);
    const seen: Array<[string, number]> = [];
    queue.forEach((item, at) => seen.push([item, at]));
    expect(seen).toEqual([
      ['a', 3],
      ['b', 7],
    ]);
  });
});

describe('CoDelQueue — congestion and CoDel shedding (target 10, interval 100)', () => {
  it('is congested when it has not been empty (found empty, or drained by service) during the last interval', () => {
    const queue = new CoDelQueue<string>({ maxSize: 10, target: 10 });
    expect(queue.congested(500)).toBe(false); // a new queue is drained
    queue.push('a', 0); // ends the drained period: lastEmptyAt = 0
    expect(queue.congested(99)).toBe(false);
    expect(queue.congested(100)).toBe(true);
    expect(queue.pop(100)).toEqual({ shed: ['a'] }); // congested: a waited 100 > 10; emptied by shedding only
    expect(queue.size).toBe(0);
    expect(queue.congested(100)).toBe(true);
    expect(queue.congested(1000)).toBe(true);
    expect(queue.pop(120).item).toBeUndefined(); // a consumer finds nothing: drained, lastEmptyAt = 120
    expect(queue.congested(120)).toBe(false);
    expect(queue.congested(10_000)).toBe(false); // drained stays calm however long
    queue.push('b', 150); // ends the drained period: lastEmptyAt = 150
    expect(queue.congested(249)).toBe(false);
    expect(queue.congested(250)).toBe(true);
    expect(queue.pop(160)).toEqual({ item: 'b', shed: [] }); // serves its last waiter, sheds nothing: drained
    expect(queue.size).toBe(0);
    expect(queue.congested(250)).toBe(false);
    expect(queue.congested(10_000)).toBe(false);
    queue.push('c', 20_000); // lastEmptyAt = 20 000
    expect(queue.congested(20_099)).toBe(false);
    expect(queue.congested(20_100)).toBe(true);
  });

  it('regression (review): drained by serving its last waiter, it gives the next arrival a calm interval', () => {
    // One slot: a runs, b waits and gets the slot at 60, then holds it for a long call until 1010. The queue
    // sits empty from 60 to 960 — nobody is waiting — so it is not a standing queue when c arrives.
    const queue = new CoDelQueue<string>({ maxSize: 10, target: 10, interval: 100 });
    queue.push('a', 0); // lastEmptyAt = 0
    queue.push('b', 20);
    expect(queue.pop(50)).toEqual({ item: 'a', shed: [] }); // calm: a waited 50 ≤ 100
    expect(queue.pop(60)).toEqual({ item: 'b', shed: [] }); // calm: b waited 40; its last waiter served, drained
    expect(queue.congested(500)).toBe(false); // empty since 60
    queue.push('c', 960); // ends the drained period: lastEmptyAt = 960
    queue.push('d', 980);
    expect(queue.congested(1010)).toBe(false);
    // t=1010: 1010 − 960 < 100 → calm, allowance 100: c waited 50 → served (against target 10 it would be shed).
    expect(queue.pop(1010)).toEqual({ item: 'c', shed: [] });
    // d keeps the queue non-empty: the calm interval runs from c's arrival, not from the pop.
    expect(queue.congested(1059)).toBe(false);
    expect(queue.congested(1060)).toBe(true);
    expect(queue.pop(1060)).toEqual({ shed: ['d'] }); // congested: d waited 80 > 10
  });

  it('drained by serving only once it stays empty for target: an immediate refill is still a standing queue', () => {
    // Congested, then served down to empty without shedding at 100: it drains at 100 + target = 110 if still empty.
    const setUp = () => {
      const queue = new CoDelQueue<string>({ maxSize: 10, target: 10, interval: 100 });
      queue.push('a', 0); // lastEmptyAt = 0
      queue.push('b', 95);
      expect(queue.pop(99)).toEqual({ item: 'a', shed: [] }); // calm: a waited 99 ≤ 100
      expect(queue.pop(100)).toEqual({ item: 'b', shed: [] }); // congested: b waited 5 ≤ 10; now empty
      return queue;
    };
    const refilled = setUp();
    expect(refilled.congested(109)).toBe(true); // empty for 9 < 10: not drained yet
    expect(refilled.congested(110)).toBe(false); // empty for 10: drained
    refilled.push('c', 104); // refilled after 4 ms: still the standing queue (lastEmptyAt stays 0)
    expect(refilled.congested(110)).toBe(true);
    expect(refilled.pop(116)).toEqual({ shed: ['c'] }); // target allowance: c waited 12 > 10

    const calm = setUp();
    calm.push('c', 110); // empty for 10 ms: drained until this arrival, lastEmptyAt = 110
    expect(calm.congested(209)).toBe(false);
    expect(calm.congested(210)).toBe(true);
    expect(calm.pop(180)).toEqual({ item: 'c', shed: [] }); // calm: c waited 70 ≤ 100

    const looked = setUp();
    looked.idle(102); // a consumer finds it empty: drained at once, as always
    looked.push('c', 104); // lastEmptyAt = 104
    expect(looked.pop(180)).toEqual({ item: 'c', shed: [] }); // calm: c waited 76 ≤ 100
  });

  it('a pop that sheds and then serves the last waiter leaves it congested (emptied by its shedding)', () => {
    const queue = new CoDelQueue<string>({ maxSize: 10, target: 10, interval: 100 });
    queue.push('a', 0); // lastEmptyAt = 0
    queue.push('b', 115);
    // t=120: congested → allowance 10: a (120) shed, b (5) served. Without shedding a the queue would not be
    // empty, so it is not drained.
    expect(queue.pop(120)).toEqual({ item: 'b', shed: ['a'] });
    expect(queue.size).toBe(0);
    expect(queue.congested(500)).toBe(true);
    queue.push('c', 500);
    expect(queue.pop(511)).toEqual({ shed: ['c'] }); // target allowance: c waited 11 > 10
  });

  it('emptied by remove() (a caller giving up), it stays congested until a consumer finds it empty', () => {
    const queue = new CoDelQueue<string>({ maxSize: 10, target: 10, interval: 100 });
    queue.push('a', 0); // lastEmptyAt = 0
    queue.push('b', 30);
    expect(queue.pop(40)).toEqual({ item: 'a', shed: [] }); // calm; b still queued
    expect(queue.remove('b')).toBe(true); // b's caller gave up: empty, but neither served nor found empty
    expect(queue.size).toBe(0);
    expect(queue.congested(500)).toBe(true);
    queue.push('c', 500);
    expect(queue.pop(511)).toEqual({ shed: ['c'] }); // target allowance: c waited 11 > 10
    expect(queue.pop(512).item).toBeUndefined(); // a consumer finds it empty: drained
    queue.push('d', 520); // lastEmptyAt = 520
    expect(queue.pop(600)).toEqual({ item: 'd', shed: [] }); // calm: d waited 80 ≤ 100
  });

  it('sheds by interval while calm and by target once congested — a hand-worked trace', () => {
    const queue = new CoDelQueue<string>({ maxSize: 10, target: 10, interval: 100 });
    queue.push('a', 0); // new queue, idle: lastEmptyAt = 0
    queue.push('b', 50);
    // t=60: not congested (60 < 100) → allowance 100; a waited 60 → served.
    expect(queue.pop(60)).toEqual({ item: 'a', shed: [] });
    queue.push('c', 120);
    queue.push('d', 130);
    // t=125: not found empty since 0 → congested → allowance 10; b waited 75 → shed; c waited 5 → served.
    expect(queue.pop(125)).toEqual({ item: 'c', shed: ['b'] });
    // t=150: d waited 20 > 10 → shed. Shedding empties the queue, which is not being found empty: lastEmptyAt
    // stays 0 and nothing is served.
    const last = queue.pop(150);
    expect(last).toEqual({ shed: ['d'] });
    expect(last.item).toBeUndefined();
    expect(queue.size).toBe(0);
    // So the next arrival still meets a congested queue: e waits 40 > target 10 → shed.
    queue.push('e', 160);
    expect(queue.pop(200)).toEqual({ shed: ['e'] });
    // t=201: a consumer finds it empty (lastEmptyAt = 201, idle). f arrives at 210 (lastEmptyAt = 210); at 250
    // 40 < 100 → calm, allowance 100 → f (40) served.
    expect(queue.pop(201).item).toBeUndefined();
    queue.push('f', 210);
    expect(queue.pop(250)).toEqual({ item: 'f', shed: [] });
  });

  it('sheds only a sojourn that exceeds the allowance, not one equal to it', () => {
    const queue = new CoDelQueue<string>({ maxSize: 10, target: 10, interval: 100 });
    queue.push('a', 0);
    queue.push('b', 90);
    // t=100: congested; a waited 100 > 10 → shed; b waited exactly 10 → served.
    expect(queue.pop(100)).toEqual({ item: 'b', shed: ['a'] });
  });

  it('regression (simulator report): emptied by its own shedding, it stays congested', () => {
    const queue = new CoDelQueue<string>({ maxSize: 10, target: 10, interval: 100 });
    queue.push('a', 0); // lastEmptyAt = 0
    queue.push('b', 50);
    // t=120: congested (120 ≥ 100) → allowance 10: a (120) and b (70) shed; nothing to serve.
    expect(queue.pop(120)).toEqual({ shed: ['a', 'b'] });
    expect(queue.size).toBe(0);
    expect(queue.congested(121)).toBe(true); // not found empty by a consumer
    // A later waiter gets the target allowance, not the interval: c waits 11 > 10 → shed.
    queue.push('c', 130);
    expect(queue.congested(130)).toBe(true);
    expect(queue.pop(141)).toEqual({ shed: ['c'] });
    // With 10 ms it would have been served.
    queue.push('d', 150);
    expect(queue.pop(160)).toEqual({ item: 'd', shed: [] });
  });

  it('a first burst after a long idle period is calm, not congested', () => {
    const queue = new CoDelQueue<string>({ maxSize: 10, target: 10, interval: 100 });
    queue.push('a', 0);
    expect(queue.pop(5).item).toBe('a');
    expect(queue.pop(20).item).toBeUndefined(); // found empty at 20: idle from then on
    queue.push('b', 10_000); // the idle period ends here: lastEmptyAt = 10 000
    queue.push('c', 10_050);
    expect(queue.congested(10_090)).toBe(false);
    // t=10 090: 90 < 100 → calm, allowance 100: b waited 90 → served (with the target it would be shed).
    expect(queue.pop(10_090)).toEqual({ item: 'b', shed: [] });
    expect(queue.congested(10_099)).toBe(false);
    expect(queue.congested(10_100)).toBe(true); // c still queued, not found empty since 10 000
  });

  it('idle(now) records a consumer finding the queue empty; on a non-empty queue it does nothing', () => {
    const queue = new CoDelQueue<string>({ maxSize: 10, target: 10, interval: 100 });
    queue.push('a', 0); // lastEmptyAt = 0
    queue.idle(50); // a waiter is queued: a consumer cannot find it empty → no-op
    expect(queue.congested(100)).toBe(true);
    expect(queue.pop(100)).toEqual({ shed: ['a'] }); // congested: a (100) > 10
    expect(queue.congested(130)).toBe(true);
    queue.idle(130); // the same as pop(130) finding nothing
    expect(queue.congested(130)).toBe(false);
    expect(queue.congested(5000)).toBe(false);
    queue.push('b', 200); // lastEmptyAt = 200
    expect(queue.congested(299)).toBe(false);
    expect(queue.congested(300)).toBe(true);
  });
});
