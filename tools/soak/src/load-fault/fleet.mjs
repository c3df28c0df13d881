// The processes of the load-and-fault run: a redis-server of its own (never the machine's 6379), the edge (load
// balancer + Redis TCP proxy, edge.mjs) and the demo replicas. Every process started here is registered, and
// `teardown()` kills them all (SIGKILL, by pid) and removes the Redis data directory: it runs on a normal end, on a
// failure and on Ctrl-C / SIGTERM, so no process or port outlives the run.
import { fork, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROOT } from '../lib/ballast.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
export const DEMO_MAIN = path.join(ROOT, 'apps/demo/dist/main.js');
const live = new Set();
const dirs = new Set();

/** A loopback port nobody listens on now (the system picks it: never 6379 while that one is taken). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function track(child) {
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

function exited(child) {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((r) => child.once('exit', r));
}

/** Kills every process this run started and removes its directories; safe to call more than once. */
let tornDown = false;
export function teardown() {
  tornDown = true;
  for (const c of live) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  dirs.clear();
}
process.once('exit', teardown);
for (const signal of ['SIGINT', 'SIGTERM'])
  process.once(signal, () => {
    teardown();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  });

/** Resolves once something accepts TCP connections on the port (a refused connection is retried). */
async function listening(port, child, what) {
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode}`);
    const ok = await new Promise((r) => {
      const s = net.connect(port, '127.0.0.1', () => (s.destroy(), r(true)));
      s.once('error', () => r(false));
    });
    if (ok) return;
    await sleep(50);
  }
  throw new Error(`${what} did not listen on ${port}`);
}

/** redis-server on its own port, with append-only persistence (a `kill -9` loses no acknowledged write). */
export class RedisServer {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ballast-soak-redis-'));
  #child;
  constructor(port) {
    this.port = port;
    dirs.add(this.dir);
  }
  async start() {
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'yes'];
    this.#child = track(spawn('redis-server', [...args, '--dir', this.dir], { stdio: 'ignore' }));
    await listening(this.port, this.#child, 'redis-server');
  }
  /** `kill -9`: no shutdown, no last write; clients see their connections reset. */
  async kill9() {
    const c = this.#child;
    c.kill('SIGKILL');
    await exited(c);
  }
}

/** The edge process (edge.mjs): `send(command)` resolves with its answer; `on(kind, fn)` gets its reports. */
export async function startEdge(config) {
  const child = track(
    fork(path.join(here, 'edge.mjs'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }),
  );
  const waiting = new Map();
  const listeners = new Map();
  let next = 0;
  child.on('message', (m) => {
    if (m.reply !== undefined) {
      waiting.get(m.reply)?.(m.value);
      waiting.delete(m.reply);
    } else for (const fn of listeners.get(m.kind) ?? []) fn(m);
  });
  const send = (command) =>
    new Promise((resolve) => {
      const id = ++next;
      waiting.set(id, resolve);
      child.send({ ...command, id });
    });
  const on = (kind, fn) => listeners.set(kind, [...(listeners.get(kind) ?? []), fn]);
  const ports = await send({ op: 'start', ...config });
  return { child, send, on, ...ports };
}

/**
 * One demo replica: `node --expose-gc -r heap-probe.cjs apps/demo/dist/main.js` on its port, with Redis through the
 * proxy. `onHeap(bytes)` gets heapUsed after a full GC every few seconds; `warnings` keeps what it logged.
 */
export class Replica {
  warnings = [];
  /** Exits the harness did not ask for (a crash): each one is a failure. */
  exits = [];
  generation = 0;
  #child;
  #stopping = new WeakSet();
  constructor({ name, port, env, onHeap }) {
    Object.assign(this, { name, port, env, onHeap });
  }
  get pid() {
    return this.#child?.pid;
  }
  async start() {
    this.generation++;
    const generation = this.generation;
    const child = track(
      spawn(process.execPath, ['--expose-gc', '-r', path.join(here, 'heap-probe.cjs'), DEMO_MAIN], {
        env: { ...process.env, ...this.env, PORT: String(this.port) },
        stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      }),
    );
    this.#child = child;
    // Nest logs its warnings to stdout: keep those, and all of stderr (not the start-up banner).
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d) => keep(d.split('\n').filter((l) => /\b(WARN|ERROR)\b/.test(l))));
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d) => keep(d.split('\n')));
    const keep = (lines) => {
      for (const line of lines.filter(Boolean))
        if (this.warnings.length < 500)
          this.warnings.push(
            `${this.name}#${generation}: ${line.replace(/\x1b\[[0-9;]*m/g, '').slice(0, 300)}`,
          );
    };
    child.on('message', (m) => m.heap !== undefined && this.onHeap(this, generation, m.heap));
    child.once('exit', (code, signal) => {
      if (this.#stopping.has(child) || tornDown) return;
      this.exits.push(`replica ${this.name}#${generation} exited by itself (${signal ?? `code ${code}`})`);
      process.stderr.write(`${this.exits.at(-1)}; its last lines:\n${this.warnings.slice(-8).join('\n')}\n`);
    });
    await listening(this.port, child, `replica ${this.name}`);
  }
  /** Sends the heap probe a message (the leak canary). */
  tell(message) {
    if (this.#child?.connected) this.#child.send(message);
  }
  /** SIGTERM and wait for the exit; resolves with the exit code (143 when the demo stopped by the signal). */
  async stop() {
    const c = this.#child;
    const done = exited(c).then(() => c.exitCode ?? c.signalCode);
    this.#stopping.add(c);
    c.kill('SIGTERM');
    return done;
  }
}
