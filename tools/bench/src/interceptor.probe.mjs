// A probe, not part of `npm run bench`: Nest's own interceptor chain (`InterceptorsConsumer`, as the router calls
// it) run in a tight loop without HTTP, so a CPU profile (`node --cpu-prof`) shows what an interceptor costs per
// request without the network's noise. Prints µs per call.
//   node tools/bench/src/interceptor.probe.mjs <none|noop|resilient> [default|noctx|als|alsnoctx]
// none: an undecorated handler, no interceptor; noop: the same under one interceptor that only calls next.handle();
// resilient: a `@Resilient('bench')` handler (rate limit + breaker + retry + timeout) — since the handler wrapping,
// no interceptor either: it is called as Nest's router calls it, with the request as its extra last argument. Modes: default ambient context; noctx = `ambientContext: false`; als / alsnoctx = the
// same in a process where another AsyncLocalStorage is already in use. Env N = measured calls (default 100000).
import 'reflect-metadata';
import { EventEmitter } from 'node:events';
import { AsyncLocalStorage } from 'node:async_hooks';
import { Controller, Get, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { InterceptorsConsumer } from '@nestjs/core/interceptors/interceptors-consumer.js';
import { isObservable, lastValueFrom } from 'rxjs';
import { ResilienceModule, Resilient } from '@ballast/nestjs';
import { httpBenchPolicy as policy } from './lib/http-policy.mjs';

const [variant = 'resilient', mode = 'default'] = process.argv.slice(2);
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
const N = Number(process.env.N ?? 100000);
for (let i = 0; i < 20000; i++) await one();
const t0 = process.hrtime.bigint();
for (let i = 0; i < N; i++) await one();
console.log(variant, mode, `${(Number(process.hrtime.bigint() - t0) / N / 1000).toFixed(2)} µs per call`);
await app.close();
process.exit(0);
