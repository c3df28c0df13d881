import { AsyncLocalStorage, AsyncResource } from 'node:async_hooks';
import type { ContextFrame } from './context-storage';
import { CONTEXT_FRAMES, contextStorage, currentFrame, runInFrame, runInScope } from './context-storage';

/**
 * Entering a call's frame (runInFrame): on Node 24 inside an AsyncResource's scope instead of
 * `AsyncLocalStorage.run`, which copies the whole context frame twice. Whichever way is taken, fn and everything it
 * awaits see the new frame and every other AsyncLocalStorage's store of the caller (a trace context, a request-scoped
 * logger), and the caller gets back exactly the context it had: on return, on a throw, after awaiting. Both ways run
 * here, on every runtime the suite runs on (Node 20 and Node 24 in CI).
 */

const frameOf = (n: number): ContextFrame => ({
  deadline: undefined,
  deadlineClock: undefined,
  criticality: n,
  call: undefined,
});

const ways: [string, typeof runInScope][] = [
  ['inside an AsyncResource scope (Node 24)', runInScope],
  ['with AsyncLocalStorage.run (the async-hooks implementation)', (f, fn, a) => contextStorage.run(f, fn, a)],
  [
    'inside the scope of an AsyncResource the caller made (a timer entry)',
    (f, fn, a) => runInScope(f, fn, a, new AsyncResource('test.timer')),
  ],
];

describe.each(ways)('entering a frame %s', (_, enter) => {
  const userStore = new AsyncLocalStorage<string>();

  it('fn, and what it awaits, see the frame and the caller’s other stores; the caller keeps its own', async () => {
    const seen: unknown[] = [];
    const outer = frameOf(1);
    await contextStorage.run(outer, () =>
      userStore.run('request-7', async () => {
        const p = enter(
          frameOf(2),
          async (arg: string) => {
            seen.push([arg, currentFrame()?.criticality, userStore.getStore()]);
            await Promise.resolve();
            await new Promise((r) => setImmediate(r));
            seen.push([arg, currentFrame()?.criticality, userStore.getStore()]);
            return 'done';
          },
          'a',
        );
        // synchronously after the call, and after awaiting it, the caller's context is as it was
        seen.push(['caller', currentFrame(), userStore.getStore()]);
        await expect(p).resolves.toBe('done');
        seen.push(['caller', currentFrame(), userStore.getStore()]);
      }),
    );
    expect(seen).toEqual([
      ['a', 2, 'request-7'],
      ['caller', outer, 'request-7'],
      ['a', 2, 'request-7'],
      ['caller', outer, 'request-7'],
    ]);
    expect(currentFrame()).toBeUndefined();
    expect(userStore.getStore()).toBeUndefined();
  });

  it('a store fn enters with enterWith stays inside fn on Node 24’s way; AsyncLocalStorage.run lets it out', async () => {
    const inner = await userStore.run('caller', async () => {
      const r = await enter(
        frameOf(1),
        async () => {
          userStore.enterWith('set-inside');
          await Promise.resolve();
          return userStore.getStore();
        },
        undefined,
      );
      // run() puts back only its own store; a scope puts back the caller's whole context (Node docs, enterWith)
      expect(userStore.getStore()).toBe(enter === ways[1]![1] ? 'set-inside' : 'caller');
      return r;
    });
    expect(inner).toBe('set-inside');
  });

  it('a synchronous throw leaves the caller’s context as it was', () => {
    userStore.run('caller', () => {
      expect(() =>
        enter(
          frameOf(3),
          () => {
            expect(currentFrame()?.criticality).toBe(3);
            throw new Error('boom');
          },
          undefined,
        ),
      ).toThrow('boom');
      expect(currentFrame()).toBeUndefined();
      expect(userStore.getStore()).toBe('caller');
    });
  });

  it('nests: an inner frame inside fn, then back to the outer one', () => {
    const trail: unknown[] = [];
    enter(
      frameOf(1),
      () => {
        trail.push(currentFrame()?.criticality);
        enter(frameOf(2), () => trail.push(currentFrame()?.criticality), undefined);
        trail.push(currentFrame()?.criticality);
      },
      undefined,
    );
    trail.push(currentFrame());
    expect(trail).toEqual([1, 2, 1, undefined]);
  });

  it('concurrent calls from one caller each keep their own frame across awaits', async () => {
    const one = enter(
      frameOf(1),
      async () => {
        await new Promise((r) => setImmediate(r));
        return currentFrame()?.criticality;
      },
      undefined,
    );
    const two = enter(
      frameOf(2),
      async () => {
        await Promise.resolve();
        return currentFrame()?.criticality;
      },
      undefined,
    );
    await expect(Promise.all([one, two])).resolves.toEqual([1, 2]);
  });
});

describe('runInFrame picks its way by the runtime’s AsyncLocalStorage', () => {
  const major = Number(process.versions.node.split('.')[0]);
  const flags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];

  it('context frames on Node ≥ 24 (unless turned off), async hooks before', () => {
    const framesOn =
      major >= 24
        ? !flags.includes('--no-async-context-frame')
        : flags.includes('--experimental-async-context-frame');
    expect(CONTEXT_FRAMES).toBe(framesOn);
  });

  it('and answers what fn returns, with the frame in place inside', () => {
    expect(runInFrame(frameOf(2), (a: number) => [a, currentFrame()?.criticality], 5)).toEqual([5, 2]);
    expect(currentFrame()).toBeUndefined();
  });
});
