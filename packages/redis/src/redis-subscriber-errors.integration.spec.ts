import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { createClient as createClient6 } from 'redis6';
import { RUN_TOPOLOGY_TESTS } from './__tests__/clients';
import { RedisServerProcess, freePort } from './__tests__/redis-server-process';
import { uniquePrefix } from './__tests__/redis-test-env';
import type { RedisClient } from './redis-commands';
import { redisControlStore } from './redis-control-store';

/**
 * The control store's own subscriber connection (the command client's `duplicate()`) reports its errors instead of
 * leaving them to the client's default: node-redis throws an `'error'` event nobody listens to, which would crash
 * the service the first time its Redis goes away; ioredis prints it to stderr. A redis-server of the test's own is
 * stopped under a live subscription, so the errors are the clients' real ones.
 */

type Family = 'ioredis' | 'node-redis 5' | 'node-redis 6';

async function commandClient(family: Family, url: string): Promise<RedisClient & { close(): unknown }> {
  // The command client has its own listener, as the README tells users; its duplicate gets none from it.
  if (family === 'ioredis') {
    const c = new Redis(url, { maxRetriesPerRequest: 1 });
    c.on('error', () => {});
    return Object.assign(c, { close: () => c.disconnect() });
  }
  const c = family === 'node-redis 5' ? createClient({ url }) : createClient6({ url });
  c.on('error', () => {});
  await c.connect();
  return Object.assign(c as unknown as RedisClient, { close: () => c.destroy() });
}

/** Polls every 20 ms until `check` holds; fails after `ms` (a real server's reconnects run on real time). */
async function until(ms: number, what: string, check: () => boolean): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > ms) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

if (RUN_TOPOLOGY_TESTS) {
  describe.each<Family>(['ioredis', 'node-redis 5', 'node-redis 6'])(
    'the control store’s subscriber when its Redis goes away (%s)',
    (family) => {
      jest.setTimeout(30_000);
      let server: RedisServerProcess;
      beforeAll(async () => {
        server = new RedisServerProcess(await freePort());
        await server.start();
      });
      afterAll(async () => {
        await server.destroy();
      });

      it('reports its connection errors as one warning and hears notices again once Redis is back', async () => {
        const emitted = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
        const ours = () =>
          emitted.mock.calls
            .filter((c) => (c[1] as unknown) === 'BallastControlWarning')
            .map((c) => String(c[0]))
            .filter((m) => m.includes('subscriber connection'));
        const stderr = jest.spyOn(console, 'error');
        const client = await commandClient(family, server.url);
        const store = redisControlStore(client, { prefix: uniquePrefix(`sub-errors-${family}`) });
        const heard: number[] = [];
        const subscription = await store.subscribe((seq) => heard.push(seq));
        try {
          await server.stop();
          await until(10_000, 'a warning about the subscriber connection', () => ours().length > 0);
          expect(ours()).toHaveLength(1);
          // ioredis's "Unhandled error event" line is not printed: the store listens.
          expect(stderr.mock.calls.flat().join(' ')).not.toContain('Unhandled error event');
          await server.start();
          const before = heard.length;
          await until(15_000, 'a notice after the restart', () => {
            void store
              .write({ action: 'resetBreaker', policy: 'p', replica: 'test' }, Date.now())
              .catch(() => undefined);
            return heard.length > before;
          });
        } finally {
          subscription.close();
          emitted.mockRestore();
          stderr.mockRestore();
          await client.close();
        }
      });
    },
  );
} else {
  describe('the control store’s subscriber when its Redis goes away', () => {
    it('needs the redis-server binary (missing; CI=true makes this a failure)', () => {
      expect(RUN_TOPOLOGY_TESTS).toBe(false);
    });
  });
}
