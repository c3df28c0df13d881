// Child process of http.bench.mjs: serves the same handler five ways, from two applications on one adapter, in one
// process, so the load generator (the parent, on the other core) compares them under identical conditions:
//   bare      — an application without Ballast (port `bare`), whose handler is also served through opossum and
//               cockatiel (routes /opossum, /cockatiel);
//   plain     — ResilienceModule imported, handler undecorated (port `app`);
//   resilient — in the same application, the handler under @Resilient('bench'): rate limit (high) + breaker +
//               retry + timeout;
//   req       — in the same application, undecorated, taking the request (`@Req()`).
// With a second argument 'noctx' the module runs with `ambientContext: false`; for a third ('control'), see below.
// Prints one JSON line of ports once listening; exits when stdin closes.
import 'reflect-metadata';
import { Controller, Get, Module, Req } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Resilient, ResilienceModule } from '@ballast/nestjs';
import { decorateMethod, throughCockatiel, throughOpossum } from './lib/http-fixtures.mjs';
import { httpBenchPolicy as policy } from './lib/http-policy.mjs';

const adapterName = process.argv[2] ?? 'express';
// 'noctx': ResilienceModule with `ambientContext: false` — no AsyncLocalStorage anywhere in this process.
const ambientContext = process.argv[3] !== 'noctx';

class BenchController {
  plain() {
    return { ok: true };
  }
  resilient() {
    return { ok: true };
  }
  req(request) {
    return request === undefined ? undefined : { ok: true };
  }
}
decorateMethod(BenchController, 'plain', Get('plain'));
// Undecorated, taking the request: Nest's own parameter resolution, which SPEC §14.6's HTTP target allows for.
decorateMethod(BenchController, 'req', Get('req'));
Req()(BenchController.prototype, 'req', 0);
decorateMethod(BenchController, 'resilient', Get('resilient'), Resilient('bench'));
Controller()(BenchController);

/**
 * The application without Ballast: the undecorated route, and the same handler body run through the peers the
 * pipeline section compares with, the way a Nest user calls them from a handler (opossum has no rate limiter or
 * retry, cockatiel no rate limiter: both do less than the `@Resilient` policy).
 */
class BareController {
  plain() {
    return { ok: true };
  }
  opossum() {
    return throughOpossum();
  }
  cockatiel() {
    return throughCockatiel();
  }
}
decorateMethod(BareController, 'plain', Get('plain'));
decorateMethod(BareController, 'opossum', Get('opossum'));
decorateMethod(BareController, 'cockatiel', Get('cockatiel'));
Controller()(BareController);

class BareModule {}
Module({ controllers: [BareController] })(BareModule);
class BallastModule {}
Module({
  imports: [ResilienceModule.forRoot({ policies: [policy], ambientContext })],
  controllers: [BenchController],
})(BallastModule);

async function serve(module) {
  const adapter = adapterName === 'fastify' ? new FastifyAdapter() : new ExpressAdapter();
  const app = await NestFactory.create(module, adapter, { logger: false });
  await app.listen(0, '127.0.0.1');
  return { app, port: app.getHttpServer().address().port };
}

const bare = await serve(BareModule);
const withBallast = await serve(BallastModule);
// With a third argument 'control', the application without Ballast is served once more, last: two identical Nest
// applications of one process differ by a few hundred instructions per request, which is the floor against which
// http-instructions.bench.mjs judges whether ResilienceModule costs an undecorated route anything.
const control = process.argv[4] === 'control' ? await serve(BareModule) : undefined;
process.stdout.write(
  `${JSON.stringify({ bare: bare.port, app: withBallast.port, control: control?.port })}\n`,
);
// Each line on stdin asks for this process's user-space CPU time so far (µs): the bench divides what a measurement
// used by the requests it served — a per-request cost that does not depend on how fast the load generator on the
// other core happened to be. System time is left out: on loopback it is mostly the kernel delivering responses to
// the client, which varies with how the client batches its reads, not with the server's own work.
process.stdin.on('data', (chunk) => {
  for (const _ of String(chunk).split('\n').slice(1)) {
    process.stdout.write(`${JSON.stringify({ cpu: process.cpuUsage().user })}\n`);
  }
});
process.stdin.on('end', async () => {
  await Promise.all([bare.app.close(), withBallast.app.close(), control?.app.close()]);
  process.exit(0);
});
