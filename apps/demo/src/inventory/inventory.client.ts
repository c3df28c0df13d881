import { Injectable } from '@nestjs/common';
import { currentSignal } from '@ballast/core';
import { Hedged, Resilient } from '@ballast/nestjs';
import { InventoryBackend } from './inventory-backend';

/**
 * Where the outbound calls live. `ResilienceModule` wraps the decorated methods at bootstrap, so callers just call
 * `inventory.stock(sku)`; `currentSignal()` hands the running attempt's signal to the backend, so a timeout or a
 * lost hedge race cancels the backend work instead of leaving it running.
 */
@Injectable()
export class InventoryClient {
  constructor(private readonly backend: InventoryBackend) {}

  /** Breaker + one retry + 500 ms timeout (policy `inventory`). */
  @Resilient('inventory')
  async stock(sku: string): Promise<number> {
    return this.backend.stock(sku, currentSignal());
  }

  /** A read that is safe to repeat: hedged after 100 ms (policy `inventory-hedged`). */
  @Hedged('inventory-hedged')
  async stockHedged(sku: string): Promise<number> {
    return this.backend.stock(sku, currentSignal());
  }
}
