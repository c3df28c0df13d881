import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';

/** A loopback port nobody listens on now (never the machine's own 6379). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/**
 * A redis-server of the test's own, on its own port and data directory, that the test can stop and start again.
 * Append-only persistence is on, as a control store that must keep standing overrides across a restart needs.
 */
export class RedisServerProcess {
  readonly dir = mkdtempSync(path.join(tmpdir(), 'ballast-redis-'));
  #process: ChildProcess | undefined;

  constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const p = spawn(
      'redis-server',
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'yes',
        '--dir',
        this.dir,
      ],
      { stdio: 'ignore' },
    );
    this.#process = p;
    const probe = new Redis(this.url, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    probe.on('error', () => {});
    try {
      for (let i = 0; i < 100; i++) {
        if (p.exitCode !== null) throw new Error(`redis-server exited with ${p.exitCode}`);
        try {
          await probe.connect();
          if ((await probe.ping()) === 'PONG') return;
        } catch {
          probe.disconnect();
          await new Promise((r) => setTimeout(r, 50));
        }
      }
      throw new Error(`redis-server on ${this.port} did not answer`);
    } finally {
      probe.disconnect();
    }
  }

  /** A clean shutdown (SIGTERM: the append-only file is flushed), waited for. */
  async stop(): Promise<void> {
    const p = this.#process;
    this.#process = undefined;
    if (p === undefined || p.exitCode !== null) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill('SIGTERM');
    await exited;
  }

  async destroy(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
