import { BadRequestException, Body, Controller, Get, HttpCode, Post, Put } from '@nestjs/common';
import { InventoryBackend, type BackendKnobs, type BackendStats } from './inventory-backend';

interface BackendView {
  knobs: BackendKnobs;
  stats: BackendStats;
}

/** The simulated backend's control panel: make it fail, slow down or overload, and watch Ballast react. */
@Controller('backend')
export class BackendController {
  constructor(private readonly backend: InventoryBackend) {}

  @Get()
  view(): BackendView {
    return { knobs: this.backend.knobs, stats: this.backend.stats };
  }

  /** e.g. `{ "failureRate": 1 }`, `{ "slowRate": 0.3 }`, `{ "latencyMs": 800 }`. */
  @Put()
  configure(@Body() body: unknown): BackendView {
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw new BadRequestException('Send a JSON object of knobs, e.g. { "failureRate": 1 }');
    const problems = this.backend.configure(body as Record<string, unknown>);
    if (problems.length > 0) throw new BadRequestException(problems);
    return this.view();
  }

  @Post('reset')
  @HttpCode(200)
  reset(): BackendView {
    this.backend.reset();
    return this.view();
  }
}
