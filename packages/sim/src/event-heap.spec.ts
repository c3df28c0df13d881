import fc from 'fast-check';
import { EventHeap, type HeapEvent } from './event-heap';

const ev = (at: number, seq: number): HeapEvent => ({ at, seq, index: -1 });

describe('EventHeap', () => {
  it('pops in (time, sequence) order, ties first-in first-out', () => {
    const h = new EventHeap<HeapEvent>();
    [ev(5, 0), ev(1, 1), ev(5, 2), ev(3, 3), ev(1, 4)].forEach((e) => h.push(e));
    const out: string[] = [];
    for (let e = h.pop(); e !== undefined; e = h.pop()) out.push(`${e.at}/${e.seq}`);
    expect(out).toEqual(['1/1', '1/4', '3/3', '5/0', '5/2']);
    expect(h.size).toBe(0);
  });

  it('removes arbitrary events and reports whether they were queued', () => {
    const h = new EventHeap<HeapEvent>();
    const es = [ev(4, 0), ev(2, 1), ev(9, 2), ev(1, 3)];
    es.forEach((e) => h.push(e));
    expect(h.remove(es[1]!)).toBe(true);
    expect(h.remove(es[1]!)).toBe(false);
    expect(es[1]!.index).toBe(-1);
    expect([h.pop()!.at, h.pop()!.at, h.pop()!.at]).toEqual([1, 4, 9]);
    expect(h.pop()).toBeUndefined();
  });

  it('matches a sorted reference under random pushes, pops and removals (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom('push', 'pop', 'remove'), fc.integer({ min: 0, max: 50 })), {
          maxLength: 300,
        }),
        (ops) => {
          const h = new EventHeap<HeapEvent>();
          let ref: HeapEvent[] = [];
          let seq = 0;
          for (const [op, x] of ops) {
            if (op === 'push') {
              const e = ev(x, seq++);
              h.push(e);
              ref.push(e);
            } else if (op === 'pop') {
              ref.sort((a, b) => a.at - b.at || a.seq - b.seq);
              const want = ref.shift();
              if (h.pop() !== want) return false;
            } else if (ref.length > 0) {
              const victim = ref[x % ref.length]!;
              ref = ref.filter((e) => e !== victim);
              if (!h.remove(victim)) return false;
            }
            if (h.size !== ref.length) return false;
          }
          return true;
        },
      ),
    );
  });
});
