// Nest's whole route function — what Express or Fastify calls for a request: guards, parameter resolution,
// interceptors, the handler, the reply — called in a loop with stand-in request and response objects, no HTTP.
// What a route pays per request for `@Resilient` (or a peer, or an interceptor) without the network's noise, and a
// clean CPU profile (`node --cpu-prof`). `handler.bench.mjs` runs it per variant (part of `npm run bench`); alone:
//   node tools/bench/src/route.probe.mjs <variant> [express|fastify] [default|noctx|als] [calls] [pieces]
// Variants, all on the handler `return { ok: true }`:
//   plain     — undecorated;
//   req       — undecorated, taking the request (`@Req()`): what one parameter costs a handler that had none;
//   noop      — under one interceptor that only calls next.handle() (what any Nest interceptor costs);
//   resilient — `@Resilient('bench')`: rate limit + breaker + retry + timeout;
//   opossum   — undecorated, its body run through opossum (breaker + timeout 1 s);
//   cockatiel — undecorated, its body run through cockatiel wrap(breaker, retry(3), timeout(1 s)).
// Modes: default ambient context; noctx = `ambientContext: false`; als = the default in a process where another
// AsyncLocalStorage is already in use (OpenTelemetry, a request-scoped logger…). Prints one JSON line.
// Pieces (comma-separated), what a request over HTTP has and the bare loop does not, added one at a time to find
// where the HTTP section's extra cost comes from (issue 24): turn = one event-loop turn (setImmediate) after each
// request, as a server between requests; fresh = a new request object per request, as Node's parser makes.
import 'reflect-metadata';
import { AsyncLocalStorage } from 'node:async_hooks';
import { EventEmitter } from 'node:events';
import { Controller, Get, Injectable, Module, Req, UseInterceptors } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Resilience } from '@ballast/core';
import { ResilienceModule, Resilient } from '@ballast/nestjs';
import { decorateMethod, throughCockatiel, throughOpossum } from './lib/http-fixtures.mjs';
import { httpBenchPolicy as policy } from './lib/http-policy.mjs';

const [variant = 'resilient', adapterName = 'express', mode = 'default', calls, pieceList = ''] =
  process.argv.slice(2);
const pieces = new Set(pieceList.split(',').filter(Boolean));
if (mode === 'als') new AsyncLocalStorage().run({}, () => {});

class NoopInterceptor {
  intercept(_context, next) {
    return next.handle();
  }
}
Injectable()(NoopInterceptor);

class ProbeController {
  plain() {
    return { ok: true };
  }
  req(request) {
    return request === undefined ? undefined : { ok: true };
  }
  noop() {
    return { ok: true };
  }
  resilient() {
    return { ok: true };
  }
  opossum() {
    return throughOpossum();
  }
  cockatiel() {
    return throughCockatiel();
  }
}
decorateMethod(ProbeController, 'plain', Get('plain'));
decorateMethod(ProbeController, 'req', Get('req'));
Req()(ProbeController.prototype, 'req', 0);
decorateMethod(ProbeController, 'noop', Get('noop'), UseInterceptors(NoopInterceptor));
decorateMethod(ProbeController, 'resilient', Get('resilient'), Resilient('bench'));
decorateMethod(ProbeController, 'opossum', Get('opossum'));
decorateMethod(ProbeController, 'cockatiel', Get('cockatiel'));
Controller()(ProbeController);
class ProbeModule {}
Module({
  imports: [ResilienceModule.forRoot({ policies: [policy], ambientContext: mode !== 'noctx' })],
  controllers: [ProbeController],
})(ProbeModule);

// Nest registers each route function through the adapter's method of its verb: keep the ones it hands over.
const adapter = adapterName === 'fastify' ? new FastifyAdapter() : new ExpressAdapter();
const routes = new Map();
const register = adapter.get;
adapter.get = function (path, handler) {
  routes.set(path, handler);
  return register.call(this, path, handler);
};
const app = await NestFactory.create(ProbeModule, adapter, { logger: false });
await app.init();
const route = routes.get(`/${variant}`);
if (route === undefined) throw new Error(`unknown variant ${variant} (routes: ${[...routes.keys()]})`);

// A keep-alive connection (its socket can close, so the client-disconnect wiring runs as over HTTP) and a response
// with what both adapters' reply paths call.
const socket = new EventEmitter();
const response = {
  statusCode: 200,
  raw: { destroyed: false },
  status() {
    return this;
  },
  code() {
    return this;
  },
  header() {
    return this;
  },
  setHeader() {},
  getHeader() {
    return undefined;
  },
  json(body) {
    if (body?.ok === true) sent++;
    return this;
  },
  send(body) {
    if (body?.ok === true) sent++;
    return this;
  },
};
// Like the adapters' own, each request names its server (Express `req.app`/`req.res`, Fastify `request.server`/`raw`),
// which is how a wrapped handler finds its application's policies.
const server = adapter.getInstance();
const newRequest = () =>
  adapterName === 'fastify'
    ? { raw: { socket, headers: {} }, server, headers: {}, params: {}, query: {} }
    : { socket, app: server, res: response, headers: {}, params: {}, query: {} };
const request = newRequest();
let sent = 0;
const next = () => {};
const turn = () => new Promise(setImmediate);
/** One request, with the pieces asked for. */
const serve = pieces.has('fresh')
  ? pieces.has('turn')
    ? async () => (await route(newRequest(), response, next), await turn())
    : () => route(newRequest(), response, next)
  : pieces.has('turn')
    ? async () => (await route(request, response, next), await turn())
    : () => route(request, response, next);
const N = Number(calls ?? process.env.N ?? 100000);
const WARM = Number(process.env.PROBE_WARM ?? Math.min(20000, N));
for (let i = 0; i < WARM; i++) await serve();
const t0 = process.hrtime.bigint();
for (let i = 0; i < N; i++) await serve();
const us = Number(process.hrtime.bigint() - t0) / N / 1000;
if (sent !== N + WARM) throw new Error(`${variant}: ${sent} responses for ${N + WARM} requests`);
if (variant === 'resilient') {
  // The calls really went through the policy: its breaker saw them (those of its last 10 s: under valgrind, where
  // route-instructions.bench.mjs runs this, the measured loop lasts longer than the breaker's window).
  const [state] = await app.get(Resilience).admin.inspect({ policy: 'bench' });
  if (!(state?.breaker?.calls >= Math.min(N, 1000)))
    throw new Error(`the policy did not run: ${JSON.stringify(state)}`);
}
// One JSON line (handler.bench.mjs reads it).
console.log(JSON.stringify({ variant, adapter: adapterName, mode, us }));
await app.close();
process.exit(0);
