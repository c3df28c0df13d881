import { BadRequestException, Body, Controller, Post } from '@nestjs/common';
import { currentSignal } from '@ballast/core';
import { Criticality, Resilient } from '@ballast/nestjs';
import { InventoryBackend } from '../inventory/inventory-backend';
import { PRODUCTS } from '../catalog/products';

/**
 * Checkout: each order holds the backend for `reserveMs`. The `checkout` bulkhead admits 2 at a time and queues 4;
 * beyond that requests are refused (503 `bulkhead_full`), and queued ones that waited past the CoDel target are
 * shed (503 `bulkhead_queue_shed`) — the backend never sees more than 2 reservations.
 * Orders are CRITICAL; a caller may send `x-criticality: best_effort` (e.g. a prefetch) to be shed first.
 */
@Controller('orders')
export class OrdersController {
  constructor(private readonly backend: InventoryBackend) {}

  @Post()
  @Resilient('checkout')
  @Criticality(Criticality.CRITICAL)
  async place(@Body() body: unknown): Promise<{ reservation: string; sku: string; quantity: number }> {
    const { sku, quantity = 1 } = (body ?? {}) as { sku?: unknown; quantity?: unknown };
    if (typeof sku !== 'string' || !PRODUCTS.some((p) => p.sku === sku))
      throw new BadRequestException(`sku must be one of ${PRODUCTS.map((p) => p.sku).join(', ')}`);
    if (typeof quantity !== 'number' || !Number.isInteger(quantity) || quantity < 1)
      throw new BadRequestException('quantity must be a positive integer');
    const reservation = await this.backend.reserve(sku, quantity, currentSignal());
    return { reservation, sku, quantity };
  }
}
