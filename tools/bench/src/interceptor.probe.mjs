// Nest's own handler step (`InterceptorsConsumer`, as the router calls it) in a tight loop without HTTP: what a
// route pays per request for an interceptor or for `@Resilient`, without the network's noise, and a clean CPU
// profile (`node --cpu-prof`). `handler.bench.mjs` runs it per variant (part of `npm run bench`); alone:
//   node tools/bench/src/interceptor.probe.mjs <none|noop|resilient> [default|noctx|als|alsnoctx] [calls]
// none: an undecorated handler, no interceptor; noop: the same under one interceptor that only calls
// next.handle(); resilient: a `@Resilient('bench')` handler (rate limit + breaker + retry + timeout), wrapped at
// bootstrap, so no interceptor either: called as Nest's router calls it, the request as its extra last argument.
// Modes: default ambient context; noctx = `ambientContext: false`; als / alsnoctx = the same in a process where
// another AsyncLocalStorage is already in use. Calls default to env N, else 100000. Prints one JSON line.
import 'reflect-metadata';
import { EventEmitter } from 'node:events';
import { AsyncLocalStorage } from 'node:async_hooks';
import { Controller, Get, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { InterceptorsConsumer } from '@nestjs/core/interceptors/interceptors-consumer.js';
import { isObservable, lastValueFrom } from 'rxjs';
import { ResilienceModule, Resilient } from '@ballast/nestjs';
import { httpBenchPolicy as policy } from './lib/http-policy.mjs';

const [variant = 'resilient', mode = 'default', calls] = process.argv.slice(2);
const ambientContext = mode !== 'noctx' && mode !== 'alsnoctx';
if (mode === 'als' || mode === 'alsnoctx') new AsyncLocalStorage().run({}, () => {});

class ProbeController {
  handler() {
    return { ok: true };
  }
  plain() {
    return { ok: true };
  }
}
for (const name of ['handler', 'plain']) {
  const descriptor = Object.getOwnPropertyDescriptor(ProbeController.prototype, name);
  Get(name)(ProbeController.prototype, name, descriptor);
  if (name === 'handler') Resilient('bench')(ProbeController.prototype, name, descriptor);
  Object.defineProperty(ProbeController.prototype, name, descriptor);
}
Controller()(ProbeController);

class ProbeModule {}
Module({
  imports: [ResilienceModule.forRoot({ policies: [policy], ambientContext })],
  controllers: [ProbeController],
})(ProbeModule);

const app = await NestFactory.createApplicationContext(ProbeModule, { logger: false });
class NoopInterceptor {
  intercept(_context, next) {
    return next.handle();
  }
}
const interceptors = { none: [], noop: [new NoopInterceptor()], resilient: [] }[variant];
if (interceptors === undefined) throw new Error(`unknown variant ${variant}`);
const consumer = new InterceptorsConsumer();
const instance = app.get(ProbeController);
// A Fastify-shaped request whose connection can close, so the client-disconnect wiring runs as it does over HTTP.
const request = { raw: { socket: new EventEmitter() }, headers: {} };
const handler = variant === 'resilient' ? instance.handler : instance.plain;
// What the router's handler step does: a fresh argument array (Nest's createNullArray), then the call.
const next = async () => handler.apply(instance, variant === 'resilient' ? [request] : []);
async function one() {
  const r = await consumer.intercept(interceptors, [request, {}], instance, handler, next, 'http');
  return isObservable(r) ? lastValueFrom(r) : r;
}
const N = Number(calls ?? process.env.N ?? 100000);
for (let i = 0; i < 20000; i++) await one();
const t0 = process.hrtime.bigint();
for (let i = 0; i < N; i++) await one();
const us = Number(process.hrtime.bigint() - t0) / N / 1000;
// One JSON line (handler.bench.mjs reads it).
console.log(JSON.stringify({ variant, mode, us }));
await app.close();
process.exit(0);
