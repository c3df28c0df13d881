// Child process of http.bench.mjs: serves the same handler four ways on one adapter, in one process, so the load
// generator (the parent, on the other core) compares them under identical conditions:
//   bare      — an application without Ballast or any interceptor (port `bare`);
//   plain     — ResilienceModule imported, handler undecorated (port `app`);
//   noop      — in the same application, the handler with a do-nothing interceptor of its own
//               (`UseInterceptors`, as the decorators attach Ballast's): what Nest's interceptor step costs;
//   resilient — in the same application, the handler under @Resilient('bench'): rate limit (high) + breaker +
//               retry + timeout.
// With a second argument 'noctx' the module runs with `ambientContext: false`.
// Prints one JSON line of ports once listening; exits when stdin closes.
import 'reflect-metadata';
import { Controller, Get, Injectable, Module, UseInterceptors } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Resilient, ResilienceModule } from '@ballast/nestjs';
import { httpBenchPolicy as policy } from './lib/http-policy.mjs';

const adapterName = process.argv[2] ?? 'express';
// 'noctx': ResilienceModule with `ambientContext: false` — no AsyncLocalStorage anywhere in this process.
const ambientContext = process.argv[3] !== 'noctx';

/** Plain JS has no decorator syntax: apply Nest's decorators by hand, exactly as compiled TypeScript does. */
function decorateMethod(cls, name, ...decorators) {
  const descriptor = Object.getOwnPropertyDescriptor(cls.prototype, name);
  for (const d of decorators.reverse()) d(cls.prototype, name, descriptor);
  Object.defineProperty(cls.prototype, name, descriptor);
}

class NoopInterceptor {
  intercept(_context, next) {
    return next.handle();
  }
}
Injectable()(NoopInterceptor);

class BenchController {
  plain() {
    return { ok: true };
  }
  noop() {
    return { ok: true };
  }
  resilient() {
    return { ok: true };
  }
}
decorateMethod(BenchController, 'plain', Get('plain'));
decorateMethod(BenchController, 'noop', Get('noop'), UseInterceptors(NoopInterceptor));
decorateMethod(BenchController, 'resilient', Get('resilient'), Resilient('bench'));
Controller()(BenchController);

/** The bare application's copy of the undecorated route (BenchController's other routes need Ballast). */
class BareController {
  plain() {
    return { ok: true };
  }
}
decorateMethod(BareController, 'plain', Get('plain'));
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
process.stdout.write(`${JSON.stringify({ bare: bare.port, app: withBallast.port })}\n`);
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
  await Promise.all([bare.app.close(), withBallast.app.close()]);
  process.exit(0);
});
