/**
 * One scheduled event of the simulation. The heap writes `index` (its slot, -1 once out of the heap) so a
 * cancelled timer is removed in O(log n) instead of lingering: a run clears hundreds of thousands of attempt
 * timeouts, and lazy deletion would let them pile up in memory.
 */
export interface HeapEvent {
  /** Virtual time at which the event fires. */
  readonly at: number;
  /** Scheduling order; breaks ties so equal-time events fire first-in first-out, as Node's timers do. */
  readonly seq: number;
  index: number;
}

function before(a: HeapEvent, b: HeapEvent): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

/** A binary min-heap on `(at, seq)`: push, pop and remove in O(log n), peek in O(1). */
export class EventHeap<E extends HeapEvent> {
  readonly #items: E[] = [];

  get size(): number {
    return this.#items.length;
  }

  peek(): E | undefined {
    return this.#items[0];
  }

  push(e: E): void {
    const items = this.#items;
    e.index = items.length;
    items.push(e);
    this.#up(e.index);
  }

  pop(): E | undefined {
    const items = this.#items;
    const top = items[0];
    if (top === undefined) return undefined;
    const last = items.pop()!;
    if (last !== top) {
      items[0] = last;
      last.index = 0;
      this.#down(0);
    }
    top.index = -1;
    return top;
  }

  /** Removes `e` if it is still queued; returns whether it was. */
  remove(e: E): boolean {
    const items = this.#items;
    const i = e.index;
    if (i < 0 || i >= items.length || items[i] !== e) return false;
    const last = items.pop()!;
    e.index = -1;
    if (last !== e) {
      items[i] = last;
      last.index = i;
      if (i > 0 && before(last, items[(i - 1) >> 1]!)) this.#up(i);
      else this.#down(i);
    }
    return true;
  }

  #up(i: number): void {
    const items = this.#items;
    const e = items[i]!;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const parent = items[p]!;
      if (!before(e, parent)) break;
      items[i] = parent;
      parent.index = i;
      i = p;
    }
    items[i] = e;
    e.index = i;
  }

  #down(i: number): void {
    const items = this.#items;
    const n = items.length;
    const e = items[i]!;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      let c = l;
      let child = items[l]!;
      if (r < n && before(items[r]!, child)) {
        c = r;
        child = items[r]!;
      }
      if (!before(child, e)) break;
      items[i] = child;
      child.index = i;
      i = c;
    }
    items[i] = e;
    e.index = i;
  }
}
