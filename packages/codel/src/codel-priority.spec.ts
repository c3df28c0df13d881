import fc from 'fast-check';
import { CoDelQueue } from './codel-queue';
import { Criticality } from './criticality';

const { BEST_EFFORT, DEGRADED, NORMAL, CRITICAL } = Criticality;

describe('CoDelQueue — adaptive LIFO', () => {
  it('serves FIFO while calm and newest-first while congested (interval 100, no target)', () => {
    const queue = new CoDelQueue<string>({ maxSize: 10, adaptiveLifo: true });
    queue.push('a', 0);
    queue.push('b', 10);
    queue.push('c', 20);
    expect(queue.pop(50).item).toBe('a'); // 50 − 0 < 100: calm, FIFO
    queue.push('d', 60);
    expect(queue.pop(110).item).toBe('d'); // not empty since 0: congested, LIFO
    expect(queue.pop(111)).toEqual({ item: 'c', shed: [] }); // b is still queued: congested, LIFO
    expect(queue.pop(112)).toEqual({ item: 'b', shed: [] }); // its last waiter served, nothing shed: drained
    expect(queue.congested(113)).toBe(false);
    expect(queue.congested(5000)).toBe(false);
    queue.push('e', 120); // lastEmptyAt = 120
    queue.push('f', 130);
    expect(queue.pop(140).item).toBe('e'); // 20 < 100: calm again, FIFO
  });

  it('combined with CoDel: sheds the stale bottom of the stack and serves the newest', () => {
    const queue = new CoDelQueue<string>({ maxSize: 10, target: 10, interval: 100, adaptiveLifo: true });
    queue.push('a', 0);
    queue.push('b', 90);
    queue.push('c', 105);
    queue.push('d', 106);
    // t=110: congested → allowance 10: a (110) and b (20) shed; c (5) and d (4) fit; d is newest.
    expect(queue.pop(110)).toEqual({ item: 'd', shed: ['a', 'b'] });
    expect(queue.pop(111)).toEqual({ item: 'c', shed: [] });
  });
});

describe('CoDelQueue — prioritized allowances (target 20, interval 100)', () => {
  it('scales the allowance by tier: ×0.25, ×0.5, ×1, ×2 — a hand-worked trace', () => {
    const queue = new CoDelQueue<string>({ maxSize: 10, target: 20, interval: 100, prioritized: true });
    queue.push('be', 0, BEST_EFFORT); // lastEmptyAt = 0
    queue.push('n', 0, NORMAL);
    queue.push('c', 10, CRITICAL);
    // t=30, calm → base 100: BEST_EFFORT may wait 25 (waited 30 → shed), NORMAL 100 (30), CRITICAL 200 (20).
    // The highest non-empty tier is served: c.
    expect(queue.pop(30)).toEqual({ item: 'c', shed: ['be'] });
    queue.push('d', 40, DEGRADED);
    queue.push('c2', 70, CRITICAL);
    // t=120, congested (not found empty since 0) → base 20: DEGRADED may wait 10 (80 → shed), NORMAL 20
    // (120 → shed), CRITICAL 40 (50 → shed). Sheds come lowest tier first.
    expect(queue.pop(120)).toEqual({ shed: ['d', 'n', 'c2'] });
    expect(queue.size).toBe(0);
  });

  it('lets a CRITICAL waiter outlast a NORMAL one under congestion', () => {
    const queue = new CoDelQueue<string>({ maxSize: 10, target: 20, interval: 100, prioritized: true });
    queue.push('first', 0, NORMAL); // keeps the queue non-empty from t=0
    queue.push('n', 170, NORMAL);
    queue.push('c', 170, CRITICAL);
    // t=200: congested → NORMAL allowance 20 (first waited 200, n 30 → both shed), CRITICAL 40 (30 → served).
    expect(queue.pop(200)).toEqual({ item: 'c', shed: ['first', 'n'] });
  });

  it('serves the highest non-empty tier first, FIFO within a tier', () => {
    const queue = new CoDelQueue<string>({ maxSize: 10, prioritized: true });
    queue.push('n1', 0, NORMAL);
    queue.push('c1', 1, CRITICAL);
    queue.push('be', 2, BEST_EFFORT);
    queue.push('c2', 3, CRITICAL);
    queue.push('n2', 4, NORMAL);
    const order = Array.from({ length: 5 }, () => queue.pop(5).item);
    expect(order).toEqual(['c1', 'c2', 'n1', 'n2', 'be']);
  });

  it('with adaptive LIFO: highest tier first, newest first within the tier while congested', () => {
    const queue = new CoDelQueue<string>({ maxSize: 10, prioritized: true, adaptiveLifo: true });
    queue.push('n1', 0, NORMAL); // lastEmptyAt = 0
    queue.push('n2', 10, NORMAL);
    queue.push('c1', 20, CRITICAL);
    queue.push('c2', 30, CRITICAL);
    queue.push('be', 40, BEST_EFFORT);
    // t=150: congested (no target, nothing shed) → CRITICAL newest first, then NORMAL newest first, then BEST_EFFORT.
    const order = Array.from({ length: 5 }, () => queue.pop(150).item);
    expect(order).toEqual(['c2', 'c1', 'n2', 'n1', 'be']);
  });

  it('regression (simulator report): a CRITICAL waiter is served before older lower-tier waiters (target 10)', () => {
    // Times exactly as reported (the BEST_EFFORT arrival is stamped 186; the queue takes times as given).
    const queue = new CoDelQueue<string>({ maxSize: 10, target: 10, interval: 100, prioritized: true });
    queue.push('n0', 0, NORMAL); // lastEmptyAt = 0
    queue.push('n150', 150, NORMAL);
    queue.push('n160', 160, NORMAL);
    queue.push('c165', 165, CRITICAL);
    queue.push('be186', 186, BEST_EFFORT);
    // t=170: congested (170 ≥ 100) → base 10. NORMAL allowance 10: n0 (170) and n150 (20) shed, n160 (10) stays;
    // CRITICAL 20: c165 (5) stays; BEST_EFFORT 2.5: be186 (−16) stays. Arrival order would serve n160 and leave
    // c165 to age past its 20 ms behind it; strict priority serves c165.
    expect(queue.pop(170)).toEqual({ item: 'c165', shed: ['n0', 'n150'] });
    // t=190: BEST_EFFORT be186 waited 4 > 2.5 → shed; NORMAL n160 waited 30 > 10 → shed.
    expect(queue.pop(190)).toEqual({ shed: ['be186', 'n160'] });
  });
});

describe('CoDelQueue — displacement when full', () => {
  it('displaces the lowest-criticality waiter, oldest among equals, only for a strictly higher arrival', () => {
    const queue = new CoDelQueue<string>({ maxSize: 2, prioritized: true });
    expect(queue.push('x', 0, BEST_EFFORT)).toEqual({ ok: true });
    expect(queue.push('y', 1, NORMAL)).toEqual({ ok: true });
    expect(queue.push('z', 2, NORMAL)).toEqual({ ok: true, displaced: 'x' });
    expect(queue.push('w', 3, NORMAL)).toEqual({ ok: false }); // equal criticality never displaces
    expect(queue.push('v', 4, CRITICAL)).toEqual({ ok: true, displaced: 'y' }); // oldest NORMAL goes
    expect(queue.size).toBe(2);
    expect(queue.pop(5).item).toBe('v'); // CRITICAL first
    expect(queue.pop(5).item).toBe('z');
  });

  it('rejects a BEST_EFFORT arrival at a full queue', () => {
    const queue = new CoDelQueue<string>({ maxSize: 1, prioritized: true });
    queue.push('a', 0, BEST_EFFORT);
    expect(queue.push('b', 0, BEST_EFFORT)).toEqual({ ok: false });
  });

  it('remove() finds waiters in any tier', () => {
    const queue = new CoDelQueue<string>({ maxSize: 5, prioritized: true });
    queue.push('a', 0, CRITICAL);
    queue.push('b', 0, DEGRADED);
    expect(queue.remove('b')).toBe(true);
    expect(queue.remove('a')).toBe(true);
    expect(queue.size).toBe(0);
    // Emptied by its callers giving up, not found empty by a consumer: still congested after the interval.
    expect(queue.congested(1000)).toBe(true);
    queue.idle(1000);
    expect(queue.congested(5000)).toBe(false);
  });
});

describe('CoDelQueue — properties', () => {
  type Op =
    | { kind: 'push'; gap: number; criticality: Criticality }
    | { kind: 'pop'; gap: number }
    | { kind: 'idle'; gap: number }
    | { kind: 'remove'; pick: number };
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({
      kind: fc.constant('push' as const),
      gap: fc.integer({ min: 0, max: 60 }),
      criticality: fc.constantFrom(BEST_EFFORT, DEGRADED, NORMAL, CRITICAL),
    }),
    fc.record({ kind: fc.constant('pop' as const), gap: fc.integer({ min: 0, max: 60 }) }),
    fc.record({ kind: fc.constant('idle' as const), gap: fc.integer({ min: 0, max: 60 }) }),
    fc.record({ kind: fc.constant('remove' as const), pick: fc.nat() }),
  );
  const config = fc.record({
    maxSize: fc.integer({ min: 0, max: 12 }),
    target: fc.option(fc.integer({ min: 0, max: 99 }), { nil: undefined }),
    adaptiveLifo: fc.boolean(),
    prioritized: fc.boolean(),
  });

  it('accounts for every item exactly once, never exceeds maxSize, and serves within the allowance', () => {
    fc.assert(
      fc.property(config, fc.array(op, { maxLength: 200 }), (c, ops) => {
        const queue = new CoDelQueue<number>({ ...c, interval: 100 });
        const queued = new Map<number, { at: number; criticality: Criticality }>();
        // Reference model of congestion: the queue counts as empty ("drained") from a consumer looking at an
        // empty queue, or from `target` after a pop served its last waiter without shedding if it is still empty
        // then; until the next accepted push.
        let idle = true;
        let lastEmptyAt = -Infinity;
        let servedEmptyAt: number | undefined;
        const drainedAt = (t: number) =>
          idle || (servedEmptyAt !== undefined && t >= servedEmptyAt + (c.target ?? 0));
        const modelCongested = (t: number) => !drainedAt(t) && t - lastEmptyAt >= 100;
        let now = 0;
        let next = 0;
        for (const o of ops) {
          if (o.kind === 'push') {
            now += o.gap;
            const id = next++;
            const result = queue.push(id, now, o.criticality);
            if (result.ok) {
              if (drainedAt(now) && result.displaced === undefined) {
                idle = false;
                lastEmptyAt = now;
              }
              if (result.displaced === undefined) servedEmptyAt = undefined;
              queued.set(id, { at: now, criticality: o.criticality });
              if (result.displaced !== undefined) {
                expect(c.prioritized).toBe(true);
                expect(queued.get(result.displaced)!.criticality).toBeLessThan(o.criticality);
                queued.delete(result.displaced);
              }
            }
          } else if (o.kind === 'pop') {
            now += o.gap;
            const wasEmpty = queued.size === 0;
            const congested = modelCongested(now);
            const { item, shed } = queue.pop(now);
            for (const s of shed) {
              expect(c.target).toBeDefined();
              expect(queued.delete(s)).toBe(true);
            }
            if (item !== undefined) {
              const entry = queued.get(item)!;
              const scale = c.prioritized ? [0.25, 0.5, 1, 2][entry.criticality]! : 1;
              if (c.target !== undefined) expect(now - entry.at).toBeLessThanOrEqual(100 * scale);
              expect(queued.delete(item)).toBe(true);
              // Service order: highest tier present first when prioritized; within the served tier the oldest,
              // or the newest while congested with adaptive LIFO.
              const sameTier = (x: { criticality: Criticality }) =>
                !c.prioritized || x.criticality === entry.criticality;
              for (const [id, other] of queued) {
                if (c.prioritized) expect(other.criticality).toBeLessThanOrEqual(entry.criticality);
                if (!sameTier(other)) continue;
                if (c.adaptiveLifo && congested) expect(id).toBeLessThan(item);
                else expect(id).toBeGreaterThan(item);
              }
            } else {
              expect(queue.size).toBe(0);
            }
            if (wasEmpty) {
              idle = true;
              lastEmptyAt = now;
              servedEmptyAt = undefined;
            } else if (item !== undefined && shed.length === 0 && queued.size === 0) {
              servedEmptyAt = now;
            }
          } else if (o.kind === 'idle') {
            now += o.gap;
            queue.idle(now);
            if (queued.size === 0) {
              idle = true;
              lastEmptyAt = now;
              servedEmptyAt = undefined;
            }
          } else {
            const ids = [...queued.keys()];
            if (ids.length === 0) continue;
            const id = ids[o.pick % ids.length]!;
            expect(queue.remove(id)).toBe(true);
            queued.delete(id);
          }
          expect(queue.size).toBe(queued.size);
          expect(queue.size).toBeLessThanOrEqual(c.maxSize);
          expect(queue.congested(now)).toBe(modelCongested(now));
          expect(queue.congested(now + 100)).toBe(modelCongested(now + 100));
        }
      }),
    );
  });
});
