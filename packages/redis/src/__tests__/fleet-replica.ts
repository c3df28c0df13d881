import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import { REDIS_URL } from './redis-test-env';

const CHILD = path.resolve(__dirname, '..', '..', 'test', 'fleet-child.cjs');

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
}

/**
 * One replica of the fleet: a separate Node process (test/fleet-child.cjs) with its own client (ioredis, or node-redis
 * as its connection asks) and stores, driven by JSON-line requests. The stores run from their TypeScript sources, so no build is needed.
 */
export class Replica {
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #pending = new Map<number, Pending>();
  #seq = 0;
  #stderr = '';
  readonly ready: Promise<void>;
  /** What the child sent with its ready line (the control child: the results of its first calls). */
  readyInfo: Record<string, unknown> = {};

  /** `child`: the script to run (default test/fleet-child.cjs); `url`: the Redis it connects to. */
  constructor(options: Record<string, unknown>, spawnWith: { child?: string; url?: string } = {}) {
    this.#child = spawn(
      process.execPath,
      [spawnWith.child ?? CHILD, spawnWith.url ?? REDIS_URL, JSON.stringify(options)],
      { stdio: 'pipe' },
    );
    this.#child.stderr.setEncoding('utf8').on('data', (d: string) => (this.#stderr += d));
    let buffered = '';
    let onReady: (() => void) | undefined;
    let onFail: ((e: Error) => void) | undefined;
    this.ready = new Promise((resolve, reject) => {
      onReady = resolve;
      onFail = reject;
    });
    this.#child.on('exit', (code) => {
      const error = new Error(`replica exited with ${code}: ${this.#stderr}`);
      onFail?.(error);
      for (const p of this.#pending.values()) p.reject(error);
      this.#pending.clear();
    });
    this.#child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const msg = JSON.parse(buffered.slice(0, nl)) as {
          id?: number;
          ready?: boolean;
          result?: unknown;
          error?: string;
        };
        buffered = buffered.slice(nl + 1);
        if (msg.ready !== undefined) {
          this.readyInfo = msg as Record<string, unknown>;
          if (msg.ready) onReady?.();
          else onFail?.(new Error(`replica could not reach Redis: ${msg.error}`));
          continue;
        }
        const p = this.#pending.get(msg.id!);
        this.#pending.delete(msg.id!);
        if (msg.error !== undefined) p?.reject(new Error(msg.error));
        else p?.resolve(msg.result);
      }
    });
  }

  /** What the child wrote to stderr so far (warnings included). */
  get stderr(): string {
    return this.#stderr;
  }

  call<T>(op: string, body: Record<string, unknown> = {}): Promise<T> {
    const id = ++this.#seq;
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.#child.stdin.write(`${JSON.stringify({ id, op, ...body })}\n`);
    });
  }

  async stop(): Promise<void> {
    if (this.#child.exitCode !== null) return;
    const exited = new Promise((r) => this.#child.once('exit', r));
    await this.call('exit').catch(() => undefined);
    await exited;
  }
}
