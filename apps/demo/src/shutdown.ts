import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { INestApplication } from '@nestjs/common';

/** How long requests already in progress may take to finish once a shutdown signal arrives. */
export const SHUTDOWN_GRACE_MS = 5_000;

/**
 * Ctrl-C / SIGTERM: stop accepting, let requests in progress finish (at most `graceMs`), then close the app (Redis
 * connection, metrics) and exit by the signal (exit status 130 / 143, as a shell expects).
 *
 * Nest's own `enableShutdownHooks()` waits for `server.close()`, which waits for every open connection: a client
 * that connected but has not sent a request (a browser's speculative preconnect, a half-sent request) held the
 * process for a minute or more, and Nest ignores a second Ctrl-C meanwhile. Here idle connections are closed at
 * once, each busy one as soon as its response is sent, the rest after the grace period — and a second signal exits
 * at once.
 */
export function closeOnSignals(
  app: INestApplication,
  { graceMs = SHUTDOWN_GRACE_MS, log = (line: string) => console.log(line) } = {},
): void {
  const server = app.getHttpServer() as Server;
  const open = new Set<Socket>();
  /** Sockets with a request in progress, and how many (a pipelining client may have several). */
  const busy = new Map<Socket, number>();
  let closing = false;

  server.on('connection', (socket: Socket) => {
    if (closing) return void socket.destroy(); // arrived between the signal and the listener closing
    open.add(socket);
    socket.once('close', () => {
      open.delete(socket);
      busy.delete(socket);
    });
  });
  server.on('request', (req: { socket: Socket }, res: { once(event: 'close', fn: () => void): unknown }) => {
    const socket = req.socket;
    busy.set(socket, (busy.get(socket) ?? 0) + 1);
    res.once('close', () => {
      const left = (busy.get(socket) ?? 1) - 1;
      if (left > 0) return void busy.set(socket, left);
      busy.delete(socket);
      if (closing) socket.end(); // the response is out: no further request on this connection
    });
  });

  const signals = ['SIGINT', 'SIGTERM'] as const;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (closing) {
      log(`${signal} again: exiting now`);
      exitBy(signal);
      return;
    }
    closing = true;
    const inFlight = [...busy.values()].reduce((n, c) => n + c, 0);
    log(
      inFlight === 0
        ? `${signal}: shutting down`
        : `${signal}: shutting down after ${inFlight} request(s) in progress (at most ${graceMs / 1000} s; again to exit now)`,
    );
    for (const socket of open) if (!busy.has(socket)) socket.destroy();
    const force = setTimeout(() => {
      log(`requests still running after ${graceMs / 1000} s: closing their connections`);
      server.closeAllConnections();
    }, graceMs);
    force.unref();
    app.close().then(
      () => {
        clearTimeout(force);
        exitBy(signal);
      },
      (error: unknown) => {
        console.error('Error during shutdown:', error);
        process.exit(1);
      },
    );
  };
  const exitBy = (signal: NodeJS.Signals): void => {
    for (const s of signals) process.removeListener(s, onSignal);
    process.kill(process.pid, signal);
  };
  for (const s of signals) process.on(s, onSignal);
}
