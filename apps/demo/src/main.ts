import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { AppModule } from './app.module';
import { DemoConfig } from './demo-config';
import { DemoStores } from './demo-stores';

async function bootstrap(): Promise<void> {
  const fastify = process.env['ADAPTER'] === 'fastify';
  const app = await NestFactory.create(AppModule, fastify ? new FastifyAdapter() : new ExpressAdapter(), {
    logger: ['error', 'warn'],
  });
  app.enableShutdownHooks();
  const port = Number(process.env['PORT'] ?? 3000);
  await app.listen(port, '127.0.0.1');
  const url = `http://127.0.0.1:${port}`;
  const { adminToken } = app.get(DemoConfig);
  console.log(
    `Ballast demo listening on ${url} (${fastify ? 'fastify' : 'express'}, ${app.get(DemoStores).description})`,
  );
  console.log(`Admin API: ${url}/resilience  token: ${adminToken}`);
  console.log(`  try: curl ${url}/products`);
  console.log(`       curl -H 'Authorization: Bearer ${adminToken}' ${url}/resilience/state`);
}

void bootstrap();
