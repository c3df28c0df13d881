import { Controller, Get, ServiceUnavailableException } from '@nestjs/common';
import { ResilienceHealthIndicator, type ResilienceHealthResult } from '@ballast/nestjs';

@Controller('healthz')
export class HealthController {
  constructor(private readonly health: ResilienceHealthIndicator) {}

  /** Liveness: the process answers. */
  @Get()
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /** Readiness-style view of the inventory breaker (terminus-compatible shape); 503 while it is open. */
  @Get('resilience')
  async resilience(): Promise<ResilienceHealthResult<'inventory'>> {
    const result = await this.health.isHealthy('inventory', { policies: ['inventory'] });
    if (result.inventory.status === 'down') throw new ServiceUnavailableException(result);
    return result;
  }
}
