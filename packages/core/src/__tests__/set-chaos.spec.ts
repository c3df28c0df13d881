import { FakeClock } from '@ballast/testing';
import { Resilience } from '../resilience';
import { InMemoryControlStore } from '../control/in-memory-control-store';
import { ChaosStrategy } from '../strategies/chaos-strategy';
import { setup } from './helpers';
import { policy } from './kit';

/** `admin.setChaos` (SPEC §14.3): chaos switched at run time, fleet-wide through the control store. */

function fleet() {
  const store = new InMemoryControlStore();
  const clock = new FakeClock();
  const make = (id: string) =>
    new Resilience({ policies: [policy('p', [])], clock, stores: { control: store }, replicaId: id });
  return { make };
}

const outcome = (r: Resilience) =>
  r
    .run(() => 'real', { policy: 'p' })
    .then(
      (v) => v,
      (e: unknown) => `error: ${(e as Error).message}`,
    );

describe('admin.setChaos', () => {
  it('reaches every replica, a replica that starts later too, and each patch builds on the standing one', async () => {
    const { make } = fleet();
    const a = make('a');
    const b = make('b');
    await a.admin.setChaos(
      'p',
      { enabled: true, fault: { rate: 1, message: 'chaos!' } },
      { reason: 'game day' },
    );
    expect(await outcome(b)).toBe('error: chaos!');
    const c = make('c');
    expect(await outcome(c)).toBe('error: chaos!');
    await b.admin.setChaos('p', { enabled: false });
    for (const r of [a, b, c]) expect(await outcome(r)).toBe('real');
    // Only `enabled` changed: the fault is still configured, everywhere, and for a replica that starts now.
    await c.admin.setChaos('p', { enabled: true });
    const d = make('d');
    for (const r of [a, b, c, d]) expect(await outcome(r)).toBe('error: chaos!');
    expect((await d.admin.inspect({ policy: 'p' }))[0]?.chaos).toEqual({
      enabled: true,
      fault: { rate: 1, message: 'chaos!' },
    });
    await a.admin.setChaos('p', { fault: null, outcome: { rate: 1, value: 'canned' } });
    for (const r of [a, b, c, d]) expect(await outcome(r)).toBe('canned');
    const audit = await a.admin.audit();
    expect(audit.filter((e) => e.action === 'setChaos')).toHaveLength(4);
    expect(audit.at(-1)).toMatchObject({ action: 'setChaos', reason: 'game day', scope: 'fleet' });
    await Promise.all([a, b, c, d].map((r) => r.close()));
  });

  it('with scope local, changes this replica only (on top of its own settings), and is audited', async () => {
    const { make } = fleet();
    const a = make('a');
    const b = make('b');
    await a.admin.setChaos('p', { enabled: true, outcome: { rate: 1, value: 'local' } }, { scope: 'local' });
    expect(await outcome(a)).toBe('local');
    expect(await outcome(b)).toBe('real');
    expect((await b.admin.audit())[0]).toMatchObject({
      action: 'setChaos',
      scope: 'local',
      replica: 'a',
      value: { enabled: true, outcome: { rate: 1, value: 'local' } },
    });
    await Promise.all([a.close(), b.close()]);
  });

  it('validates the patch with the call, every violation in one error, and changes nothing', async () => {
    const { resilience } = setup([policy('p', [new ChaosStrategy({ latency: { rate: 0.5, delay: 10 } })])]);
    const before = await resilience.admin.inspect({ policy: 'p' });
    await expect(
      resilience.admin.setChaos('p', { fault: { rate: 1.5 }, colour: 'red' } as never, {
        scope: 'x' as never,
      }),
    ).rejects.toThrow(
      /Invalid admin\.setChaos\(\) call: .*options\.scope must be one of 'fleet', 'local', got 'x'.*colour must be a known chaos setting.*fault\.rate must be/,
    );
    expect(await resilience.admin.inspect({ policy: 'p' })).toEqual(before);
    await expect(resilience.admin.setChaos('nope', { enabled: true })).rejects.toMatchObject({
      code: 'unknown_policy',
    });
  });

  it('in shadow mode, draws and reports the injection but injects nothing', async () => {
    const { resilience, ofType } = setup([
      policy('p', [new ChaosStrategy({ enabled: true, fault: { rate: 1, message: 'boom' } })], {
        mode: 'shadow',
      }),
    ]);
    await expect(resilience.run(() => 'real', { policy: 'p' })).resolves.toBe('real');
    expect(ofType('chaos_injected')).toEqual([
      { type: 'chaos_injected', policy: 'p', route: undefined, injection: 'fault', attempt: 1, shadow: true },
    ]);
  });
});
