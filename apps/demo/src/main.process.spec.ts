import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import path from 'node:path';

/**
 * What a user of `npm start` meets at the process level — Ctrl-C / SIGTERM, a port already taken, a Redis that is
 * not there — checked on the real entry point (src/main.ts) in a child process (test/main-child.cjs runs it from
 * source), with real signals and real sockets.
 */
const CHILD = path.resolve(__dirname, '..', 'test', 'main-child.cjs');

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

class Demo {
  readonly child: ChildProcessWithoutNullStreams;
  output = '';
  readonly exited: Promise<Exit>;
  readonly url: Promise<string>;

  constructor(env: Record<string, string>) {
    const { REDIS_URL: _ignored, ...parentEnv } = process.env;
    this.child = spawn(process.execPath, [CHILD], {
      env: { ...parentEnv, PORT: '0', ADMIN_TOKEN: 'test-token', ...env },
      stdio: 'pipe',
    });
    this.child.stdout.setEncoding('utf8').on('data', (d: string) => (this.output += d));
    this.child.stderr.setEncoding('utf8').on('data', (d: string) => (this.output += d));
    this.exited = new Promise((resolve) =>
      this.child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    this.url = new Promise((resolve, reject) => {
      const check = (): void => {
        const m = /listening on (http:\/\/[\d.:]+)/.exec(this.output);
        if (m) resolve(m[1]!);
      };
      this.child.stdout.on('data', check);
      void this.exited.then(() => reject(new Error(`the demo exited before listening:\n${this.output}`)));
    });
    this.url.catch(() => undefined); // a test that expects an early exit never asks for the URL
  }

  /** Resolves with the exit, or with `undefined` if the process is still running after `ms`. */
  async exitWithin(ms: number): Promise<Exit | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(resolve, ms, undefined)));
    try {
      return await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }
}

function call(
  url: string,
  method: string,
  route: string,
  body?: unknown,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${url}${route}`,
      { method, headers: { 'content-type': 'application/json' } },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

async function until(predicate: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await predicate()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('condition never held');
}

/** A port nothing listens on: bound by the system, then released. */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('npm start, as a process', () => {
  const started: Demo[] = [];
  const sockets: Socket[] = [];
  let blocker: Server | undefined;
  const start = (env: Record<string, string> = {}): Demo => {
    const demo = new Demo(env);
    started.push(demo);
    return demo;
  };
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    for (const d of started.splice(0)) d.kill();
    await new Promise((resolve) => (blocker ? blocker.close(resolve) : resolve(undefined)));
    blocker = undefined;
  });

  it('exits at once on SIGTERM although a client holds a connection without sending a request', async () => {
    const demo = start();
    const url = new URL(await demo.url);
    // What a browser's speculative preconnect looks like: connected, nothing sent. Nest's default shutdown waited
    // for it until the server's headers timeout.
    const idle = connect(Number(url.port), '127.0.0.1');
    sockets.push(idle);
    await new Promise((resolve) => idle.once('connect', resolve));
    demo.child.kill('SIGTERM');
    expect(await demo.exitWithin(3000)).toEqual({ code: null, signal: 'SIGTERM' });
  });

  it('on Ctrl-C lets a request in progress finish, then exits by the signal', async () => {
    const demo = start();
    const url = await demo.url;
    await call(url, 'PUT', '/backend', { reserveMs: 400 });
    const order = call(url, 'POST', '/orders', { sku: 'rope-12' });
    await until(async () => JSON.parse((await call(url, 'GET', '/backend')).body).stats.inFlight === 1);
    demo.child.kill('SIGINT');
    expect((await order).status).toBe(201);
    expect(await demo.exitWithin(3000)).toEqual({ code: null, signal: 'SIGINT' });
    expect(demo.output).toContain('SIGINT: shutting down after 1 request(s) in progress');
  });

  it('exits at once on a second Ctrl-C while a request is still running', async () => {
    const demo = start();
    const url = await demo.url;
    await call(url, 'PUT', '/backend', { reserveMs: 60_000 });
    const order = call(url, 'POST', '/orders', { sku: 'rope-12' }).catch((e: Error) => e);
    await until(async () => JSON.parse((await call(url, 'GET', '/backend')).body).stats.inFlight === 1);
    demo.child.kill('SIGINT');
    await until(async () => demo.output.includes('SIGINT: shutting down'));
    demo.child.kill('SIGINT');
    expect(await demo.exitWithin(3000)).toEqual({ code: null, signal: 'SIGINT' });
    await order;
  });

  it('says which port is taken and how to pick another, and exits with 1', async () => {
    blocker = createServer();
    await new Promise<void>((resolve) => blocker!.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as AddressInfo;
    const demo = start({ PORT: String(port) });
    expect(await demo.exitWithin(15_000)).toEqual({ code: 1, signal: null });
    expect(demo.output).toContain(`Port ${port} on 127.0.0.1 is already in use`);
    expect(demo.output).toContain(`PORT=${port + 1} npm start`);
    expect(demo.output).not.toMatch(/^\s+at /m); // no stack trace
  });

  it('refuses a PORT that is not a port number', async () => {
    const demo = start({ PORT: 'http' });
    expect(await demo.exitWithin(15_000)).toEqual({ code: 1, signal: null });
    expect(demo.output).toContain("PORT must be a port number (0–65535), got 'http'");
  });

  it('with REDIS_URL at a dead port: says so at start, warns once, and serves on local state', async () => {
    const redisPort = await deadPort();
    const demo = start({ REDIS_URL: `redis://127.0.0.1:${redisPort}` });
    const url = await demo.url;
    expect(demo.output).toMatch(
      new RegExp(
        `Redis stores at redis://127\\.0\\.0\\.1:${redisPort} — UNREACHABLE \\(connect ECONNREFUSED`,
      ),
    );
    for (let i = 0; i < 5; i++) expect((await call(url, 'GET', '/products')).status).toBe(200);
    expect((await call(url, 'GET', '/products')).status).toBe(429); // the limit holds, on this replica's state
    await new Promise((resolve) => setTimeout(resolve, 1000)); // ioredis retries several times meanwhile
    expect(demo.output.match(/unreachable \(connect ECONNREFUSED/g)).toHaveLength(1);
    demo.child.kill('SIGTERM');
    expect(await demo.exitWithin(3000)).toEqual({ code: null, signal: 'SIGTERM' });
  });
});
