import { useBench, type ConformanceOptions, type StoreSetup } from './harness';
import type { ControlChangeShape, ControlStoreShape } from './store-shapes';

const BY = { replica: 'replica-a', actor: 'alice', reason: 'incident 42' } as const;
const SPEC = { name: 'payments', strategies: [{ type: 'retry', maxAttempts: 2 }] };

/** Waits for the next notice of `store` (remote stores deliver them asynchronously), bounded by `ms`. */
async function nextNotice(
  store: ControlStoreShape,
  act: () => Promise<unknown>,
  ms = 2000,
): Promise<{ seqs: number[]; close(): Promise<void> }> {
  const seqs: number[] = [];
  let notified!: () => void;
  const got = new Promise<void>((resolve) => (notified = resolve));
  const sub = await store.subscribe((seq) => {
    seqs.push(seq);
    notified();
  });
  await act();
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    got,
    new Promise((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
  ]);
  clearTimeout(timer);
  return { seqs, close: async () => void (await sub.close()) };
}

/**
 * The contract of a `ControlStore` (SPEC §14.1), runnable against any implementation: standing force-opens with
 * expiry, retunes with versions and compare-and-set (exactly one concurrent writer wins), fleet resets, notices, a
 * newest-first audit trail, and replica heartbeats. Each test gets a fresh, empty store from `setup`.
 */
export function describeControlStoreConformance(
  name: string,
  setup: StoreSetup<ControlStoreShape>,
  options: ConformanceOptions = {},
): void {
  const concurrency = Math.min(options.concurrency ?? 50, 200);
  describe(`ControlStore conformance: ${name}`, () => {
    if (options.timeout !== undefined) jest.setTimeout(options.timeout);
    const bench = useBench(setup, options);
    const write = (change: ControlChangeShape) => bench().store.write(change, bench().now());

    it('starts empty, at seq 0', async () => {
      const b = bench();
      expect(await b.store.read(b.now())).toEqual({
        seq: 0,
        forced: [],
        policies: [],
        resets: [],
        settings: [],
      });
      expect(await b.store.seq()).toBe(0);
      expect(await b.store.audit(10)).toEqual([]);
    });

    it('a force-open stands, with its reason and actor, until cleared; each write moves seq by one', async () => {
      const b = bench();
      expect(await write({ action: 'forceOpen', policy: 'payments', route: 'eu', ...BY })).toEqual({
        ok: true,
        seq: 1,
      });
      await write({ action: 'forceOpen', policy: 'payments', ...BY });
      const state = await b.store.read(b.now());
      expect(state.seq).toBe(2);
      expect(sortForced(state.forced)).toEqual([
        { policy: 'payments', route: undefined, reason: BY.reason, actor: BY.actor, seq: 2 },
        { policy: 'payments', route: 'eu', reason: BY.reason, actor: BY.actor, seq: 1 },
      ]);
      await b.advance(3_600_000);
      expect((await b.store.read(b.now())).forced).toHaveLength(2); // no ttl: no expiry
      expect(await b.store.seq()).toBe(2);
    });

    it('a ttl counts down in `remaining` and the override is gone once it ends', async () => {
      const b = bench();
      await write({ action: 'forceOpen', policy: 'payments', route: 'eu', ttl: 10_000, ...BY });
      expect((await b.store.read(b.now())).forced[0]?.remaining).toBeCloseTo(10_000, -1);
      await b.advance(4_000);
      expect((await b.store.read(b.now())).forced[0]?.remaining).toBeCloseTo(6_000, -1);
      await b.advance(6_001);
      expect((await b.store.read(b.now())).forced).toEqual([]);
    });

    it('forcing a key again replaces its override (new seq, new ttl)', async () => {
      const b = bench();
      await write({ action: 'forceOpen', policy: 'p', route: 'r', ttl: 1_000, ...BY });
      await write({ action: 'forceOpen', policy: 'p', route: 'r', replica: 'replica-b' });
      const { forced } = await b.store.read(b.now());
      expect(forced).toEqual([{ policy: 'p', route: 'r', seq: 2 }]);
      await b.advance(5_000);
      expect((await b.store.read(b.now())).forced).toHaveLength(1);
    });

    it('a clear with a route clears that route; without one, every override of the policy (and no other)', async () => {
      const b = bench();
      await write({ action: 'forceOpen', policy: 'p', route: 'a', ...BY });
      await write({ action: 'forceOpen', policy: 'p', route: 'b', ...BY });
      await write({ action: 'forceOpen', policy: 'p', ...BY });
      await write({ action: 'forceOpen', policy: 'q', route: 'a', ...BY });
      await write({ action: 'clearForcedOpen', policy: 'p', route: 'a', ...BY });
      expect(sortForced((await b.store.read(b.now())).forced).map((f) => [f.policy, f.route])).toEqual([
        ['p', undefined],
        ['p', 'b'],
        ['q', 'a'],
      ]);
      await write({ action: 'clearForcedOpen', policy: 'p', ...BY });
      expect((await b.store.read(b.now())).forced.map((f) => [f.policy, f.route])).toEqual([['q', 'a']]);
    });

    it('routes are opaque: a route holding |, %, braces, quotes or non-ASCII is its own key', async () => {
      const b = bench();
      const routes = ['a|b', 'a%7Cb', '{x}', '"q"', 'ünï', ''];
      for (const route of routes) await write({ action: 'forceOpen', policy: 'p', route, ...BY });
      const got = (await b.store.read(b.now())).forced.map((f) => f.route).sort();
      expect(got).toEqual([...routes].sort());
    });

    it('a retune stores the spec at version 1, then 2; a stale ifVersion changes nothing and names the version', async () => {
      const b = bench();
      expect(await write({ action: 'retune', policy: 'payments', spec: SPEC, ...BY })).toEqual({
        ok: true,
        seq: 1,
        version: 1,
      });
      const spec2 = { ...SPEC, strategies: [{ type: 'retry', maxAttempts: 5 }] };
      expect(await write({ action: 'retune', policy: 'payments', spec: spec2, ifVersion: 1, ...BY })).toEqual(
        {
          ok: true,
          seq: 2,
          version: 2,
        },
      );
      const stale = await write({ action: 'retune', policy: 'payments', spec: SPEC, ifVersion: 1, ...BY });
      expect(stale).toEqual({ ok: false, version: 2 });
      const state = await b.store.read(b.now());
      expect(state.seq).toBe(2);
      expect(state.policies).toEqual([{ policy: 'payments', version: 2, spec: spec2 }]);
      expect(await b.store.audit(10)).toHaveLength(2); // the refused write left no trace
      expect(
        await write({ action: 'retune', policy: 'other', spec: SPEC, ifVersion: 0, ...BY }),
      ).toMatchObject({
        ok: true,
        version: 1,
      });
    });

    it(`exactly one of ${concurrency} concurrent compare-and-set retunes wins`, async () => {
      const b = bench();
      const results = await Promise.all(
        Array.from({ length: concurrency }, (_, i) =>
          b.store.write(
            { action: 'retune', policy: 'race', spec: { ...SPEC, i }, ifVersion: 0, replica: `r${i}` },
            b.now(),
          ),
        ),
      );
      const winners = results.filter((r) => r.ok);
      expect(winners).toHaveLength(1);
      expect(results.filter((r) => !r.ok).every((r) => !r.ok && r.version === 1)).toBe(true);
      expect((await b.store.read(b.now())).policies).toHaveLength(1);
      expect(await b.store.seq()).toBe(1);
    });

    it('setMode and setChaos stand per policy as JSON data; a newer one of the same action replaces the older', async () => {
      const b = bench();
      const chaos = {
        enabled: true,
        latency: { rate: 0.5, delay: 200 },
        outcome: { rate: 0.1, value: [1, {}] },
      };
      await write({ action: 'setMode', policy: 'p', value: 'shadow', ...BY });
      await write({ action: 'setChaos', policy: 'p', value: chaos, ...BY });
      await write({ action: 'setMode', policy: 'q|x:y', value: 'shadow', ...BY });
      await write({ action: 'setMode', policy: 'p', value: 'enforce', ...BY });
      const settings = [...(await b.store.read(b.now())).settings].sort((x, y) => x.seq - y.seq);
      expect(settings).toEqual([
        { policy: 'p', action: 'setChaos', value: chaos, seq: 2 },
        { policy: 'q|x:y', action: 'setMode', value: 'shadow', seq: 3 },
        { policy: 'p', action: 'setMode', value: 'enforce', seq: 4 },
      ]);
      expect((await b.store.audit(1))[0]).toMatchObject({
        action: 'setMode',
        policy: 'p',
        value: 'enforce',
        ...BY,
      });
    });

    it('a fleet reset is kept with its seq, so a replica that missed the notice still applies it', async () => {
      const b = bench();
      await write({ action: 'resetBreaker', policy: 'p', route: 'r', ...BY });
      await write({ action: 'resetBreaker', policy: 'p', ...BY });
      expect((await b.store.read(b.now())).resets).toEqual([
        { policy: 'p', route: 'r', seq: 1 },
        { policy: 'p', route: undefined, seq: 2 },
      ]);
    });

    it('the audit trail is newest first, capped by limit, and holds what each action named', async () => {
      const b = bench();
      await write({ action: 'forceOpen', policy: 'p', route: 'r', ttl: 60_000, ...BY });
      await write({ action: 'retune', policy: 'p', spec: SPEC, ...BY });
      await b.store.record({ action: 'clearForcedOpen', policy: 'p', scope: 'local', replica: 'replica-b' });
      const all = await b.store.audit(10);
      expect(all.map((e) => e.action)).toEqual(['clearForcedOpen', 'retune', 'forceOpen']);
      expect(all[2]).toMatchObject({
        action: 'forceOpen',
        policy: 'p',
        route: 'r',
        scope: 'fleet',
        ttl: 60_000,
        ...BY,
      });
      expect(all[1]).toMatchObject({ action: 'retune', scope: 'fleet', spec: SPEC, version: 1 });
      expect(all[0]).toEqual(expect.objectContaining({ scope: 'local', replica: 'replica-b' }));
      expect(all[0]).not.toHaveProperty('route');
      for (const e of all) expect(typeof e.at).toBe('number');
      expect(all[0]!.at).toBeGreaterThanOrEqual(all[2]!.at);
      expect(await b.store.audit(1)).toEqual([all[0]]);
    });

    it('subscribers are notified of each write with its seq, and no more once closed', async () => {
      const b = bench();
      const first = await nextNotice(b.store, () =>
        Promise.resolve(write({ action: 'forceOpen', policy: 'p', ...BY })),
      );
      expect(first.seqs).toContain(1);
      await first.close();
      const seen: number[] = [];
      const sub = await b.store.subscribe((seq) => seen.push(seq));
      await sub.close();
      const second = await nextNotice(b.store, () =>
        Promise.resolve(write({ action: 'clearForcedOpen', policy: 'p', ...BY })),
      );
      expect(second.seqs).toContain(2);
      await second.close();
      expect(seen).toEqual([]);
    });

    it('replicas: a heartbeat lists a replica until it leaves or its ttl ends (ttl 0: until it leaves)', async () => {
      const b = bench();
      await b.store.heartbeat({ id: 'a', startedAt: 1, version: 3 }, 0, b.now());
      await b.store.heartbeat({ id: 'b', startedAt: 2, version: 3 }, 10_000, b.now());
      const listed = (await b.store.replicas(b.now())).sort((x, y) => x.id.localeCompare(y.id));
      expect(listed.map((r) => [r.id, r.startedAt, r.version])).toEqual([
        ['a', 1, 3],
        ['b', 2, 3],
      ]);
      for (const r of listed) expect(typeof r.lastSeen).toBe('number');
      await b.advance(10_001);
      expect((await b.store.replicas(b.now())).map((r) => r.id)).toEqual(['a']);
      await b.store.heartbeat({ id: 'b', startedAt: 2, version: 4 }, 10_000, b.now());
      expect((await b.store.replicas(b.now())).find((r) => r.id === 'b')?.version).toBe(4);
      await b.store.leave('a');
      expect((await b.store.replicas(b.now())).map((r) => r.id)).toEqual(['b']);
    });
  });
}

function sortForced<T extends { policy: string; route: string | undefined }>(forced: readonly T[]): T[] {
  const key = (f: T): string => `${f.policy}|${f.route === undefined ? '' : `:${f.route}`}`;
  return [...forced].sort((a, b) => key(a).localeCompare(key(b)));
}
