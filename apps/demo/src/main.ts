import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { AppModule } from './app.module';
import { DemoConfig } from './demo-config';
import { DemoStores } from './demo-stores';
import { closeOnSignals } from './shutdown';

async function bootstrap(): Promise<void> {
  const fastify = process.env['ADAPTER'] === 'fastify';
  // An empty or blank PORT (`PORT= npm start`) is unset, not port 0 (which would pick a random port).
  const port = Number(process.env['PORT']?.trim() || 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    return fail(`PORT must be a port number (0–65535), got '${process.env['PORT']}'.`);
  const app = await NestFactory.create(AppModule, fastify ? new FastifyAdapter() : new ExpressAdapter(), {
    // VERBOSE=1 adds Nest's `log` level: the per-hop lines of GET /chain (README §8), among Nest's own start-up lines.
    logger: process.env['VERBOSE'] === '1' ? ['error', 'warn', 'log'] : ['error', 'warn'],
  });
  try {
    await app.listen(port, '127.0.0.1');
  } catch (error) {
    await app.close().catch(() => undefined); // the Redis connection would keep the process alive
    if ((error as { code?: string }).code === 'EADDRINUSE')
      return fail(
        `Port ${port} on 127.0.0.1 is already in use (another demo still running?). ` +
          `Stop it, or pick another port: PORT=${port + 1} npm start`,
      );
    throw error;
  }
  closeOnSignals(app);
  // The port actually bound: PORT=0 asks the system for a free one.
  const url = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
  const { adminToken } = app.get(DemoConfig);
  console.log(
    `Ballast demo listening on ${url} (${fastify ? 'fastify' : 'express'}, ${app.get(DemoStores).description})`,
  );
  console.log(`Admin API: ${url}/resilience  token: ${adminToken}`);
  console.log(`Dashboard: ${url}/resilience/ui  (enter the token on the page)`);
  console.log(`  try: curl ${url}/products`);
  console.log(`       curl -H 'Authorization: Bearer ${adminToken}' ${url}/resilience/state`);
  console.log('  Ctrl-C to stop');
}

function fail(message: string): void {
  console.error(message);
  process.exitCode = 1;
}

bootstrap().catch((error: unknown) => {
  console.error('The demo could not start:', error);
  process.exit(1);
});
