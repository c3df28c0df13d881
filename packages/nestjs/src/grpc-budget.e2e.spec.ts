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
import { ResilienceModule, Resilient } from './index';

/**
 * Deadline and criticality over real gRPC (SPEC §14.4): a client sends its remaining budget as grpc-timeout and its
 * criticality as metadata (core's grpcPropagation); a Nest gRPC server with the `headers` option binds both around
 * a decorated handler, so everything the handler awaits sees what is left of the caller's budget.
 */
const PROTO = join(__dirname, '__tests__', 'budget.proto');

@Controller()
class BudgetController {
  @GrpcMethod('Budget', 'Seen')
  @Resilient('plain')
  seen(): { remaining: number; hasDeadline: boolean; level: number } {
    const left = remainingTime();
    return { remaining: left ?? 0, hasDeadline: left !== undefined, level: currentCriticality() };
  }
}

describe('a Nest gRPC server reads the caller’s deadline and criticality', () => {
  let service: INestMicroservice;
  let client: grpc.Client & Record<string, (...args: unknown[]) => unknown>;

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
    const definition = grpc.loadPackageDefinition(protoLoader.loadSync(PROTO)) as unknown as {
      budget: { Budget: new (url: string, creds: grpc.ChannelCredentials) => typeof client };
    };
    client = new definition.budget.Budget(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  });
  afterAll(async () => {
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
});
