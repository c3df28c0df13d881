import 'reflect-metadata';
import {
  Controller,
  Get,
  Injectable,
  ServiceUnavailableException,
  type CanActivate,
  type ExecutionContext,
  type INestApplication,
} from '@nestjs/common';
import { CircuitBreakerStrategy, RateLimitStrategy, ResiliencePolicy } from '@ballast/core';
import { FakeClock } from '@ballast/testing';
import request from 'supertest';
import { ADAPTERS, bootApp } from './harness';
import { Resilient, ResilienceAdminModule, ResilienceModule, type ResilienceAdminOptions } from '../index';

/** The application the admin API specs boot: two policies, three decorated routes, a bearer-token guard. */
@Injectable()
export class TokenGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>();
    return req.headers['authorization'] === 'Bearer s3cret';
  }
}

@Controller('api')
export class ApiController {
  failing = true;

  @Get('limited')
  @Resilient('limited')
  limited(): { ok: true } {
    return { ok: true };
  }

  @Get('eu')
  @Resilient('limited', { route: 'eu' })
  eu(): { ok: true } {
    return { ok: true };
  }

  @Get('flaky')
  @Resilient('guarded')
  flaky(): { ok: true } {
    if (this.failing) throw new ServiceUnavailableException();
    return { ok: true };
  }
}

export function policies(): ResiliencePolicy[] {
  return [
    new ResiliencePolicy({ name: 'limited', strategies: [new RateLimitStrategy({ permits: 2, per: '1m' })] }),
    new ResiliencePolicy({
      name: 'guarded',
      strategies: [
        new CircuitBreakerStrategy({
          failureRatio: 0.5,
          samplingWindow: '10s',
          minThroughput: 2,
          breakDuration: '1m',
        }),
      ],
    }),
  ];
}

export async function boot(
  adapter: (typeof ADAPTERS)[number],
  admin: ResilienceAdminOptions,
): Promise<INestApplication> {
  return bootApp(adapter, {
    imports: [
      ResilienceModule.forRoot({ policies: policies(), clock: new FakeClock() }),
      ResilienceAdminModule.forRoot(admin),
    ],
    controllers: [ApiController],
  });
}

export const auth = { Authorization: 'Bearer s3cret' };

/** The (policy, route) pairs `GET /state` shows forced open. */
export async function forcedOpen(app: INestApplication): Promise<{ policy: string; route: string | null }[]> {
  const res = await request(app.getHttpServer()).get('/resilience/state').set(auth).expect(200);
  return (res.body.state as { policy: string; route: string | null; forcedOpen: boolean }[])
    .filter((s) => s.forcedOpen)
    .map(({ policy, route }) => ({ policy, route }));
}

export { ADAPTERS };
