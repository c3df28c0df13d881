/**
 * A growable ring buffer of `(item, enqueuedAt)` entries with O(1) push at the back and pop at either end.
 * Parallel arrays (items and a `Float64Array` of times) avoid an entry object per push.
 * Capacity is a power of two so that wrapping is a mask, and doubles when full.
 * @internal
 */
export class RingDeque<T> {
  private items: Array<T | undefined>;
  private times: Float64Array;
  private mask = 0;
  private head = 0;
  private length = 0;

  constructor(initialCapacity = 8) {
    let capacity = 1;
    while (capacity < initialCapacity) capacity *= 2;
    this.items = new Array<T | undefined>(capacity).fill(undefined);
    this.times = new Float64Array(capacity);
    this.mask = capacity - 1;
  }

  get size(): number {
    return this.length;
  }

  pushBack(item: T, time: number): void {
    if (this.length > this.mask) this.grow();
    const slot = (this.head + this.length) & this.mask;
    this.items[slot] = item;
    this.times[slot] = time;
    this.length++;
  }

  /** Enqueue time of the oldest entry (call only when non-empty). */
  frontTime(): number {
    return this.times[this.head]!;
  }

  /** Removes and returns the oldest item (call only when non-empty). */
  popFront(): T {
    const slot = this.head;
    const item = this.items[slot] as T;
    this.items[slot] = undefined; // let the queue forget it
    this.head = (slot + 1) & this.mask;
    this.length--;
    return item;
  }

  /** Removes and returns the newest item (call only when non-empty). */
  popBack(): T {
    const slot = (this.head + this.length - 1) & this.mask;
    const item = this.items[slot] as T;
    this.items[slot] = undefined;
    this.length--;
    return item;
  }

  /** Removes the first entry holding `item` (by identity); O(n). */
  remove(item: T): boolean {
    for (let i = 0; i < this.length; i++) {
      if (this.items[(this.head + i) & this.mask] === item) {
        this.removeAt(i);
        return true;
      }
    }
    return false;
  }

  /** Visits items from oldest to newest. */
  forEach(visit: (item: T, enqueuedAt: number) => void): void {
    for (let i = 0; i < this.length; i++) {
      const slot = (this.head + i) & this.mask;
      visit(this.items[slot] as T, this.times[slot]!);
    }
  }

  /** Closes the gap at logical index `index` by shifting the later entries one slot towards the front. */
  private removeAt(index: number): void {
    for (let i = index; i < this.length - 1; i++) {
      const to = (this.head + i) & this.mask;
      const from = (to + 1) & this.mask;
      this.items[to] = this.items[from];
      this.times[to] = this.times[from]!;
    }
    this.items[(this.head + this.length - 1) & this.mask] = undefined;
    this.length--;
  }

  private grow(): void {
    const capacity = (this.mask + 1) * 2;
    const items = new Array<T | undefined>(capacity).fill(undefined);
    const times = new Float64Array(capacity);
    for (let i = 0; i < this.length; i++) {
      const slot = (this.head + i) & this.mask;
      items[i] = this.items[slot];
      times[i] = this.times[slot]!;
    }
    this.items = items;
    this.times = times;
    this.mask = capacity - 1;
    this.head = 0;
  }
}
