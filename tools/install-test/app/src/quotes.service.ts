import { Injectable } from '@nestjs/common';
import { currentSignal } from '@ballast/core';
import { Resilient } from '@ballast/nestjs';

/** A provider whose method runs under a retry policy: the dependency fails twice, then answers. */
@Injectable()
export class QuotesService {
  private attempts = 0;

  @Resilient('retrying')
  async price(): Promise<{ price: number; attempts: number; signalled: boolean }> {
    this.attempts += 1;
    if (this.attempts < 3) throw Object.assign(new Error('connection reset'), { code: 'ECONNRESET' });
    // currentSignal() answers from the AsyncLocalStorage of the one @ballast/core both the app and Ballast load
    return { price: 42, attempts: this.attempts, signalled: currentSignal() instanceof AbortSignal };
  }
}
