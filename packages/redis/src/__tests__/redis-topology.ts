import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

/*
 * Real Redis topologies of a test file's own, started from the `redis-server` binary on loopback ports picked at
 * random in 10000–22767 (each probed free, with its Cluster bus port +10000), never the machine's own 6379. Both
 * stay below Linux's ephemeral range (32768–60999), where an outgoing connection could take a port between the
 * probe and redis-server's bind. Every server runs in a process group of its own, killed in `stop()` and, should the
 * test process die first, on exit, and logs to a file of its own that a failed start prints. A topology whose start
 * fails is stopped and started again on another range, twice at most (a CI run once saw a server that was alive but
 * did not answer PING for 10 s, cause unknown).
 */

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const p of running) killGroup(p);
});

function killGroup(p: ChildProcess): void {
  if (p.exitCode !== null || p.signalCode !== null || p.pid === undefined) return;
  try {
    process.kill(-p.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

const isFree = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });

const LOWEST_PORT = 10000;
/** Bus ports (+10000) end below 32768, the start of Linux's default ephemeral range. */
const HIGHEST_PORT = 22767;

/** `count` consecutive loopback ports (and their +10000 bus ports) nobody listens on. */
export async function freePortRange(count: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = LOWEST_PORT + Math.floor(Math.random() * (HIGHEST_PORT - LOWEST_PORT + 1 - count));
    const ports = Array.from({ length: count }, (_, i) => base + i);
    const free = await Promise.all(ports.flatMap((p) => [isFree(p), isFree(p + 10000)]));
    if (free.every(Boolean)) return base;
  }
  throw new Error(`no free port range in ${LOWEST_PORT}–${HIGHEST_PORT}`);
}

/** Runs redis-cli against a port; answers its stdout (throws on a non-zero exit). */
export function cli(port: number, ...args: string[]): string {
  return cliWithin(10_000, port, ...args);
}

function cliWithin(ms: number, port: number, ...args: string[]): string {
  const r = spawnSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], {
    encoding: 'utf8',
    timeout: ms,
  });
  if (r.status !== 0) throw new Error(`redis-cli -p ${port} ${args.join(' ')}: ${r.stderr || r.stdout}`);
  return r.stdout.trim();
}

/** A read from a Cluster replica (READONLY first, on the same connection); answers the read's reply. */
export function replicaRead(port: number, ...args: string[]): string {
  const r = spawnSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port)], {
    encoding: 'utf8',
    timeout: 10_000,
    input: `READONLY\n${args.join(' ')}\n`,
  });
  if (r.status !== 0) throw new Error(`redis-cli -p ${port} ${args.join(' ')}: ${r.stderr || r.stdout}`);
  return r.stdout.trim().split('\n').slice(1).join('\n');
}

export async function until(ms: number, what: string, check: () => boolean): Promise<void> {
  const start = Date.now();
  for (;;) {
    try {
      if (check()) return;
    } catch {
      // not yet
    }
    if (Date.now() - start > ms) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Redis Cluster's slot of `key`: CRC16 (XMODEM) of its hash tag (or of the whole key) mod 16384. */
export function keySlot(key: string): number {
  const open = key.indexOf('{');
  const close = open >= 0 ? key.indexOf('}', open + 1) : -1;
  const hashed = Buffer.from(close > open + 1 ? key.slice(open + 1, close) : key);
  let crc = 0;
  for (const byte of hashed) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16384;
}

/** A redis-server of the topology's: no persistence, its own directory and process group. */
class Server {
  readonly process: ChildProcess;
  readonly log: string;
  constructor(
    readonly port: number,
    dir: string,
    args: string[],
  ) {
    this.log = path.join(dir, `redis-${port}.log`);
    this.process = spawn(
      'redis-server',
      [...args, '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--logfile', this.log],
      {
        stdio: 'ignore',
        detached: true,
      },
    );
    running.add(this.process);
    this.process.once('exit', () => running.delete(this.process));
  }

  get alive(): boolean {
    return this.process.exitCode === null && this.process.signalCode === null;
  }

  /** Answers PING within 10 s; otherwise rejects at once if it exited, and with the end of its log either way. */
  async ready(): Promise<void> {
    const start = Date.now();
    for (;;) {
      if (!this.alive)
        throw new Error(`redis-server on ${this.port} exited; its log ends:\n${this.logTail()}`);
      try {
        // A short timeout per PING, so that one hung redis-cli cannot use up the whole 10 s.
        if (cliWithin(2_000, this.port, 'PING') === 'PONG') return;
      } catch {
        // not yet
      }
      if (Date.now() - start > 10_000) {
        throw new Error(
          `not within 10000 ms: redis-server on ${this.port} answers; its log ends:\n${this.logTail()}`,
        );
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  logTail(lines = 20): string {
    if (!existsSync(this.log)) return '(no log file)';
    return readFileSync(this.log, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  }

  /** SIGKILL: a crash, not a shutdown. */
  async kill(): Promise<void> {
    if (!this.alive) return;
    const exited = new Promise((r) => this.process.once('exit', r));
    killGroup(this.process);
    await exited;
  }
}

// A replica's first sync is diskless by default, and the master then waits `repl-diskless-sync-delay` (5 s) for more
// replicas to join it: every topology start (and the re-sync of a demoted master) paid those 5 s.
const NO_PERSISTENCE = ['--save', '', '--appendonly', 'no', '--repl-diskless-sync-delay', '0'];

/** Starts a topology; a failed start (stopped by `start` itself) is tried again on another port range. */
async function withRetries<T>(start: () => Promise<T>, attempts = 3): Promise<T> {
  const errors: string[] = [];
  for (let i = 1; ; i++) {
    try {
      return await start();
    } catch (e) {
      errors.push(`attempt ${i}: ${(e as Error).message}`);
      if (i === attempts) throw new Error(`topology did not start:\n${errors.join('\n')}`, { cause: e });
      process.stderr.write(
        `redis topology start failed, trying another port range: ${(e as Error).message}\n`,
      );
    }
  }
}

abstract class Topology {
  readonly dir = mkdtempSync(path.join(tmpdir(), 'ballast-topology-'));
  protected readonly servers: Server[] = [];

  protected start(port: number, args: string[]): Server {
    const s = new Server(port, this.dir, args);
    this.servers.push(s);
    return s;
  }

  /** Crashes the server on `port` (SIGKILL). */
  async kill(port: number): Promise<void> {
    await this.servers.find((s) => s.port === port)!.kill();
  }

  async stop(): Promise<void> {
    await Promise.all(this.servers.map((s) => s.kill()));
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Three masters, three replicas (`redis-cli --cluster create … --cluster-replicas 1`), node timeout 1 s. */
export class RedisClusterTopology extends Topology {
  private constructor(readonly ports: number[]) {
    super();
  }

  static start(): Promise<RedisClusterTopology> {
    return withRetries(() => RedisClusterTopology.startOnce());
  }

  private static async startOnce(): Promise<RedisClusterTopology> {
    const base = await freePortRange(6);
    const t = new RedisClusterTopology(Array.from({ length: 6 }, (_, i) => base + i));
    try {
      const servers = t.ports.map((port) =>
        t.start(port, [
          ...NO_PERSISTENCE,
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          `nodes-${port}.conf`,
          '--cluster-node-timeout',
          '1000',
          '--cluster-replica-validity-factor',
          '0',
        ]),
      );
      await Promise.all(servers.map((s) => s.ready()));
      const nodes = t.ports.map((p) => `127.0.0.1:${p}`);
      cli(t.ports[0]!, '--cluster', 'create', ...nodes, '--cluster-replicas', '1', '--cluster-yes');
      await t.healthy();
      return t;
    } catch (e) {
      await t.stop();
      throw e;
    }
  }

  /** Where a client starts (it discovers the rest). */
  get seeds(): { host: string; port: number }[] {
    return this.ports.map((port) => ({ host: '127.0.0.1', port }));
  }

  /**
   * Every live node reports `cluster_state:ok`, and in each one's view every slot is served by a master that is
   * alive (a crashed master counts only once it was failed over).
   */
  async healthy(ms = 20_000): Promise<void> {
    const live = () => this.servers.filter((s) => s.alive);
    await until(ms, 'cluster healthy', () =>
      live().every((s) => {
        if (!cli(s.port, 'CLUSTER', 'INFO').includes('cluster_state:ok')) return false;
        const ports = new Set(live().map((l) => l.port));
        let served = 0;
        for (const line of cli(s.port, 'CLUSTER', 'NODES').split('\n')) {
          const [, addr, flags, , , , , state, ...ranges] = line.split(' ');
          const port = Number(addr!.split(':')[1]!.split('@')[0]);
          if (!flags!.includes('master') || flags!.includes('fail') || state !== 'connected') continue;
          if (!ports.has(port)) continue;
          for (const r of ranges) {
            const [lo, hi] = r.split('-').map(Number);
            served += (hi ?? lo!) - lo! + 1;
          }
        }
        return served === 16384;
      }),
    );
  }

  /**
   * `masterOf` for many keys at once: one read of the slot map, slots computed here (the test runs pick routes by
   * the hundred, and each `masterOf` spawns redis-cli twice).
   */
  masters(): (key: string) => number {
    const live = this.servers.find((s) => s.alive)!;
    const owner = new Map<number, number>();
    for (const line of cli(live.port, 'CLUSTER', 'NODES').split('\n')) {
      const [, addr, flags, , , , , state, ...ranges] = line.split(' ');
      if (!flags?.includes('master') || flags.includes('fail') || state !== 'connected') continue;
      const port = Number(addr!.split(':')[1]!.split('@')[0]);
      for (const r of ranges) {
        const [lo, hi] = r.split('-').map(Number);
        for (let slot = lo!; slot <= (hi ?? lo)!; slot++) owner.set(slot, port);
      }
    }
    return (key) => owner.get(keySlot(key))!;
  }

  /** The port of the master that serves `key`'s slot, asked of a live node. */
  masterOf(key: string): number {
    const live = this.servers.find((s) => s.alive)!;
    const slot = Number(cli(live.port, 'CLUSTER', 'KEYSLOT', key));
    const nodes = cli(live.port, 'CLUSTER', 'NODES').split('\n');
    for (const line of nodes) {
      const [, addr, flags, , , , , state, ...ranges] = line.split(' ');
      if (!flags?.includes('master') || flags.includes('fail') || state !== 'connected') continue;
      for (const r of ranges) {
        const [lo, hi] = r.split('-').map(Number);
        if (slot >= lo! && slot <= (hi ?? lo)!) return Number(addr!.split(':')[1]!.split('@')[0]);
      }
    }
    throw new Error(`no master serves ${key}`);
  }

  /** The port of a live replica of the master on `port`. */
  replicaOf(port: number): number {
    const live = this.servers.find((s) => s.alive)!;
    const lines = cli(live.port, 'CLUSTER', 'NODES')
      .split('\n')
      .map((l) => l.split(' '));
    const master = lines.find((l) => l[1]!.startsWith(`127.0.0.1:${port}@`))!;
    const replica = lines.find((l) => l[3] === master[0] && !l[2]!.includes('fail'));
    if (replica === undefined) throw new Error(`no replica of ${port}`);
    return Number(replica[1]!.split(':')[1]!.split('@')[0]);
  }
}

/** One master, one replica, three sentinels (quorum 2) watching `name`; down after 1 s. */
export class RedisSentinelTopology extends Topology {
  readonly name = 'ballast';
  private constructor(
    readonly master: number,
    readonly replica: number,
    readonly sentinels: number[],
  ) {
    super();
  }

  static start(): Promise<RedisSentinelTopology> {
    return withRetries(() => RedisSentinelTopology.startOnce());
  }

  private static async startOnce(): Promise<RedisSentinelTopology> {
    const base = await freePortRange(5);
    const t = new RedisSentinelTopology(base, base + 1, [base + 2, base + 3, base + 4]);
    try {
      const master = t.start(t.master, NO_PERSISTENCE);
      const replica = t.start(t.replica, [...NO_PERSISTENCE, '--replicaof', '127.0.0.1', String(t.master)]);
      await Promise.all([master.ready(), replica.ready()]);
      const sentinels = t.sentinels.map((port) => {
        const conf = path.join(t.dir, `sentinel-${port}.conf`);
        writeFileSync(
          conf,
          [
            `sentinel monitor ${t.name} 127.0.0.1 ${t.master} 2`,
            `sentinel down-after-milliseconds ${t.name} 1000`,
            `sentinel failover-timeout ${t.name} 5000`,
            '',
          ].join('\n'),
        );
        return t.start(port, [conf, '--sentinel']);
      });
      await Promise.all(sentinels.map((s) => s.ready()));
      await until(10_000, 'replica in sync', () =>
        cli(t.replica, 'INFO', 'replication').includes('master_link_status:up'),
      );
      return t;
    } catch (e) {
      await t.stop();
      throw e;
    }
  }

  get sentinelNodes(): { host: string; port: number }[] {
    return this.sentinels.map((port) => ({ host: '127.0.0.1', port }));
  }
}
