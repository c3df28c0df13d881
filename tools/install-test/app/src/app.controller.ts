import { Controller, Get } from '@nestjs/common';
import { Resilience } from '@ballast/core';
import { Resilient } from '@ballast/nestjs';
import { QuotesService } from './quotes.service.js';

@Controller()
export class AppController {
  constructor(
    private readonly quotes: QuotesService,
    private readonly resilience: Resilience,
  ) {}

  @Get('limited')
  @Resilient('limited')
  limited(): { ok: true } {
    return { ok: true };
  }

  @Get('quote')
  quote(): Promise<{ price: number; attempts: number; signalled: boolean }> {
    return this.quotes.price();
  }

  @Get('guarded')
  @Resilient('guarded')
  guarded(): { ok: true } {
    return { ok: true };
  }

  /** The Resilience Nest injects is an instance of the class this app imports: one copy of @ballast/core. */
  @Get('identity')
  async identity(): Promise<{ sameCore: boolean; policies: string[] }> {
    return {
      sameCore: this.resilience instanceof Resilience,
      policies: await this.resilience.admin.policies(),
    };
  }
}
