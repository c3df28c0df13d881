import { describeControlStoreConformance } from '@ballast/testing';
import { InMemoryControlStore } from './in-memory-control-store';

// The port's contract, shared with the Redis store (its assertions live in @ballast/testing).
describeControlStoreConformance('InMemoryControlStore', () => ({ store: new InMemoryControlStore() }));

/** What only the in-process store promises: it needs no timer, because it notifies within the write. */
describe('InMemoryControlStore, in-process specifics', () => {
  it('answers synchronously and notifies every subscriber before write returns; a closed one hears nothing', () => {
    const store = new InMemoryControlStore({ wallClock: () => 1_000 });
    const heard: string[] = [];
    const a = store.subscribe((seq) => heard.push(`a${seq}`));
    const b = store.subscribe((seq) => heard.push(`b${seq}`));
    const first = store.write({ action: 'forceOpen', policy: 'p', replica: 'r1' }, 0);
    expect(first).toEqual({ ok: true, seq: 1 });
    expect(heard).toEqual(['a1', 'b1']);
    a.close();
    a.close(); // idempotent
    store.write({ action: 'clearForcedOpen', policy: 'p', replica: 'r1' }, 0);
    expect(heard).toEqual(['a1', 'b1', 'b2']);
    expect(store.seq()).toBe(2);
    expect(store.read(0).forced).toEqual([]);
    b.close();
  });

  it('the same function subscribed twice is two subscriptions', () => {
    const store = new InMemoryControlStore();
    const seqs: number[] = [];
    const listener = (seq: number): void => void seqs.push(seq);
    const one = store.subscribe(listener);
    store.subscribe(listener);
    one.close();
    store.write({ action: 'resetBreaker', policy: 'p', replica: 'r1' }, 0);
    expect(seqs).toEqual([1]);
  });
});
