import 'reflect-metadata';
import { join } from 'node:path';
import { Controller, type INestMicroservice } from '@nestjs/common';
import { GrpcMethod, Transport } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import {
  Criticality,
  ResiliencePolicy,
  RetryStrategy,
  bindCriticality,
  currentCriticality,
  grpcPropagation,
  remainingTime,
  withDeadline,
} from '@ballast/core';
import { freePort } from './__tests__/harness';
import { RawGrpcClient } from './__tests__/raw-grpc';
import { ResilienceModule, Resilient } from './index';

/**
 * Deadline and criticality over real gRPC (SPEC §14.4): a client sends its remaining budget as grpc-timeout and its
 * criticality as metadata (core's grpcPropagation); a Nest gRPC server with the `headers` option binds both around
 * a decorated handler, so everything the handler awaits sees what is left of the caller's budget.
 */
const PROTO = join(__dirname, '__tests__', 'budget.proto');
/** Calls that reached the handler. */
let handled = 0;

@Controller()
class BudgetController {
  @GrpcMethod('Budget', 'Seen')
  @Resilient('plain')
  seen(): { remaining: number; hasDeadline: boolean; level: number } {
    handled++;
    const left = remainingTime();
    return { remaining: left ?? 0, hasDeadline: left !== undefined, level: currentCriticality() };
  }

  /** Undecorated: the `headers` option alone binds the deadline around it (the global interceptor). */
  @GrpcMethod('Budget', 'Plain')
  plain(): { remaining: number; hasDeadline: boolean; level: number } {
    return this.seen();
  }
}

describe('a Nest gRPC server reads the caller’s deadline and criticality', () => {
  let service: INestMicroservice;
  let client: grpc.Client & Record<string, (...args: unknown[]) => unknown>;
  let raw: RawGrpcClient;

  beforeAll(async () => {
    const port = await freePort();
    const moduleRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({
          headers: { deadline: 'x-deadline-budget-ms', criticality: 'x-criticality' },
          policies: [
            new ResiliencePolicy({ name: 'plain', strategies: [new RetryStrategy({ maxAttempts: 1 })] }),
          ],
        }),
      ],
      controllers: [BudgetController],
    }).compile();
    service = moduleRef.createNestMicroservice({
      transport: Transport.GRPC,
      options: { package: 'budget', protoPath: PROTO, url: `127.0.0.1:${port}` },
      logger: false,
    });
    await service.listen();
    raw = new RawGrpcClient(`127.0.0.1:${port}`);
    const definition = grpc.loadPackageDefinition(protoLoader.loadSync(PROTO)) as unknown as {
      budget: { Budget: new (url: string, creds: grpc.ChannelCredentials) => typeof client };
    };
    client = new definition.budget.Budget(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  });
  afterAll(async () => {
    raw?.close();
    client?.close();
    await service?.close();
  });

  function seen(metadata: grpc.Metadata, options: grpc.CallOptions) {
    return new Promise<{ remaining: number; hasDeadline: boolean; level: number }>((resolve, reject) =>
      client['seen']!(
        {},
        metadata,
        options,
        (error: unknown, reply: { remaining: number; hasDeadline: boolean; level: number }) =>
          error ? reject(error) : resolve(reply),
      ),
    );
  }

  it('the handler sees the budget the client had left (less the time on the way) and its criticality', async () => {
    const reply = await withDeadline(5000, () =>
      bindCriticality(Criticality.CRITICAL, () => {
        const { metadata, options } = grpcPropagation(new grpc.Metadata());
        return seen(metadata, options);
      }),
    );
    expect(reply.hasDeadline).toBe(true);
    expect(reply.remaining).toBeGreaterThan(0);
    expect(reply.remaining).toBeLessThanOrEqual(5000);
    expect(reply.level).toBe(Criticality.CRITICAL);
  });

  it('without a deadline or criticality on the call, nothing is bound', async () => {
    const reply = await seen(new grpc.Metadata(), {});
    expect(reply.hasDeadline).toBe(false);
    expect(reply.level).toBe(Criticality.NORMAL);
  });

  /** A raw call to Budget/Seen with these headers; `seen()` checks the server still answers normally afterwards. */
  const rawSeen = (headers: Record<string, string>, method = 'Seen') =>
    raw.call(`/budget.Budget/${method}`, headers);

  it('a call whose deadline has already passed fails with DEADLINE_EXCEEDED without running the handler', async () => {
    const before = handled;
    // 0m is a deadline of now; 1n rounds down to it in grpc-js (whole ms). grpc-js's own deadline timer races the
    // handler (plain grpc-js runs it and answers OK); Ballast refuses the call first, decorated handler or not.
    for (const method of ['Seen', 'Plain'])
      for (const timeout of ['0m', '1n', '0S'])
        expect(await rawSeen({ 'grpc-timeout': timeout }, method)).toEqual({
          status: grpc.status.DEADLINE_EXCEEDED,
          reset: undefined,
        });
    expect(handled).toBe(before);
    expect((await seen(new grpc.Metadata(), {})).level).toBe(Criticality.NORMAL);
  });

  it('a grpc-timeout not in gRPC’s format is refused by grpc-js (INTERNAL) before Nest; the handler never runs', async () => {
    const before = handled;
    const values = ['-5', '1e309', 'abc', '5x', '5s', '9'.repeat(10_000)];
    const outcomes = await Promise.all(values.map((v) => rawSeen({ 'grpc-timeout': v })));
    expect(outcomes).toEqual(values.map(() => ({ status: grpc.status.INTERNAL, reset: undefined })));
    expect(handled).toBe(before);
    expect((await seen(new grpc.Metadata(), {})).hasDeadline).toBe(false);
  });

  it('a huge grpc-timeout binds at most headers.maxInboundBudget (1 day by default), as on HTTP', async () => {
    // grpc-js reads the last 8 digits and the unit: 99999999 ms, about 27.8 hours.
    const outcome = await rawSeen({ 'grpc-timeout': `${'9'.repeat(10_000)}m` });
    expect(outcome).toEqual({ status: grpc.status.OK, reset: undefined });
    const reply = await withDeadline(100_000_000, () => {
      const { metadata, options } = grpcPropagation(new grpc.Metadata());
      return seen(metadata, options);
    });
    expect(reply.hasDeadline).toBe(true);
    expect(reply.remaining).toBeLessThanOrEqual(86_400_000);
    expect(reply.remaining).toBeGreaterThan(86_400_000 - 60_000);
  });

  it('hostile criticality metadata is ignored: the call runs at NORMAL', async () => {
    for (const value of ['-5', '1e309', 'abc', '4', '9'.repeat(10_000), 'critical!']) {
      const metadata = new grpc.Metadata();
      metadata.set('x-criticality', value);
      expect((await seen(metadata, {})).level).toBe(Criticality.NORMAL);
    }
    expect((await seen(new grpc.Metadata(), {})).level).toBe(Criticality.NORMAL);
  });
});
