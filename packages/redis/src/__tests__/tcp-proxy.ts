import net from 'node:net';

/**
 * A TCP proxy in front of Redis that can fail on command, so an outage hits only the test's own connections
 * (a CLIENT PAUSE would stall every other test sharing the server).
 * - `stall()`: Redis stops answering — bytes are held, not lost, and delivered on `restore()`;
 * - `cut()`: every connection is reset and new ones are refused until `restore()`.
 */
export class TcpProxy {
  readonly #server: net.Server;
  readonly #sockets = new Set<net.Socket>();
  readonly #held: Array<() => void> = [];
  #mode: 'forward' | 'stall' | 'cut' = 'forward';

  private constructor(server: net.Server) {
    this.#server = server;
  }

  static async start(targetHost: string, targetPort: number): Promise<TcpProxy> {
    const server = net.createServer();
    const proxy = new TcpProxy(server);
    server.on('connection', (client) => proxy.#accept(client, targetHost, targetPort));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get url(): string {
    return `redis://127.0.0.1:${(this.#server.address() as net.AddressInfo).port}`;
  }

  stall(): void {
    this.#mode = 'stall';
  }

  cut(): void {
    this.#mode = 'cut';
    for (const s of this.#sockets) s.destroy();
    this.#sockets.clear();
  }

  restore(): void {
    this.#mode = 'forward';
    for (const flush of this.#held.splice(0)) flush();
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise((resolve) => this.#server.close(resolve));
  }

  #accept(client: net.Socket, host: string, port: number): void {
    if (this.#mode === 'cut') {
      client.destroy();
      return;
    }
    const upstream = net.connect(port, host);
    for (const s of [client, upstream]) {
      this.#sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => {
        this.#sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    const pipe = (from: net.Socket, to: net.Socket) =>
      from.on('data', (chunk: Buffer) => {
        if (this.#mode === 'stall') this.#held.push(() => to.write(chunk));
        else to.write(chunk);
      });
    pipe(client, upstream);
    pipe(upstream, client);
  }
}
