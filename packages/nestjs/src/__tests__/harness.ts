import 'reflect-metadata';
import { request as httpRequest, type ClientRequest } from 'node:http';
import { createServer } from 'node:net';
import type { INestApplication, ModuleMetadata } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import type { FakeClock } from '@ballast/testing';

/** Every e2e suite runs on both HTTP adapters (`describe.each(ADAPTERS)`). */
export const ADAPTERS = ['express', 'fastify'] as const;
export type AdapterName = (typeof ADAPTERS)[number];

/** Boots a real Nest application (real HTTP stack, no listening port unless asked) on one adapter. */
export async function bootApp(
  adapter: AdapterName,
  metadata: ModuleMetadata,
  options: { listen?: boolean } = {},
): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule(metadata).compile();
  const app = moduleRef.createNestApplication(
    adapter === 'express' ? new ExpressAdapter() : new FastifyAdapter(),
    {
      logger: false,
    },
  );
  if (options.listen === true) await app.listen(0, '127.0.0.1');
  else await app.init();
  if (adapter === 'fastify')
    await (app.getHttpAdapter().getInstance() as { ready(): Promise<unknown> }).ready();
  return app;
}

export interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Starts a supertest request now (supertest is lazy until `then`) and returns its promise. */
export function start<T>(request: PromiseLike<T>): Promise<T> {
  return Promise.resolve(request);
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Advances the fake clock in small steps, letting real I/O (the HTTP round trip) run between steps, until
 * `promise` settles. For flows with several timer-driven steps (retry backoff) whose exact interleaving with
 * socket I/O the test does not care about.
 */
export async function pump<T>(clock: FakeClock, promise: Promise<T>, step = 5, maxSteps = 2_000): Promise<T> {
  let settled = false;
  const watched = promise.then(
    (value) => {
      settled = true;
      return value;
    },
    (error: unknown) => {
      settled = true;
      throw error;
    },
  );
  for (let i = 0; i < maxSteps && !settled; i++) {
    await clock.advance(step);
    await tick();
  }
  return watched;
}

/** Polls `predicate` between event-loop turns (real I/O included) until it holds; fails after `maxTurns`. */
export async function eventually(
  predicate: () => boolean | Promise<boolean>,
  maxTurns = 10_000,
): Promise<void> {
  for (let i = 0; i < maxTurns; i++) {
    if (await predicate()) return;
    await tick();
  }
  throw new Error('eventually: condition never held');
}

/**
 * The error a testing module with `metadata` fails to initialise with, or undefined when it starts (bootstrap
 * validation: `onModuleInit` throws). The module is closed either way.
 */
export async function bootstrapError(metadata: ModuleMetadata): Promise<unknown> {
  const moduleRef = await Test.createTestingModule(metadata).compile();
  try {
    await moduleRef.init();
    return undefined;
  } catch (error) {
    return error;
  } finally {
    await moduleRef.close().catch(() => {}); // close() re-throws the failed initialisation
  }
}

/** A free TCP port on loopback (listen on 0, read it, close). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

/** A GET on its own socket (no agent), so a test can destroy it to disconnect the client. */
export function openRequest(port: number, path: string): ClientRequest {
  const req = httpRequest({ host: '127.0.0.1', port, path, agent: false });
  req.on('error', () => {}); // the socket is destroyed on purpose
  req.end();
  return req;
}
