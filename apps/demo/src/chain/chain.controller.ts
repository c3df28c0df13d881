import { BadRequestException, Controller, Get, Headers, HttpException, Logger, Param } from '@nestjs/common';
import { currentCriticality, propagationHeaders, remainingTime, withPropagation } from '@ballast/core';

/** What one hop of the chain saw: the budget left when it started, and the criticality it ran at. */
export interface Hop {
  readonly hop: number;
  readonly budgetMs: number | null;
  readonly criticality: number;
}

/**
 * A chain of services in one process: `GET /chain/:hops` calls `GET /chain/:hops-1` on this same server over real
 * HTTP (through core's `withPropagation(fetch)`), down to 0, and answers every hop's view. With
 * `x-deadline-budget-ms` on the first request, each hop binds what the previous one had left and sends on what it
 * has left itself, so the budget shrinks hop by hop (also in the log); `x-criticality` travels the same way; a budget
 * that runs out ends every hop below with it (SPEC §14.4).
 */
@Controller('chain')
export class ChainController {
  readonly #log = new Logger('Chain');
  readonly #fetch = withPropagation();

  @Get(':hops')
  async hop(@Param('hops') param: string, @Headers('host') host: string): Promise<Hop[]> {
    const hops = Number(param);
    if (!Number.isInteger(hops) || hops < 0 || hops > 5)
      throw new BadRequestException(`hops must be an integer in [0, 5], got ${JSON.stringify(param)}`);
    const left = remainingTime();
    const here: Hop = {
      hop: hops,
      budgetMs: left === undefined ? null : Math.floor(left),
      criticality: currentCriticality(),
    };
    this.#log.log(
      `hop ${hops}: ${here.budgetMs === null ? 'no deadline' : `${here.budgetMs} ms left`}, sending on ${JSON.stringify(propagationHeaders())}`,
    );
    if (hops === 0) return [here];
    const res = await this.#fetch(`http://${host}/chain/${hops - 1}`);
    const body = (await res.json()) as Hop[] | Record<string, unknown>;
    if (!res.ok) throw new HttpException(body, res.status);
    return [here, ...(body as Hop[])];
  }
}
