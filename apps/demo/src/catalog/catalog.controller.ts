import { Controller, Get, Inject, NotFoundException, Param } from '@nestjs/common';
import type { Clock } from '@ballast/core';
import { Resilient } from '@ballast/nestjs';
import { DEMO_CLOCK } from '../demo-config';
import { InventoryClient } from '../inventory/inventory.client';
import { PRODUCTS, type Product } from './products';

/** The public catalog. Listing is rate limited; stock comes through the decorated inventory client. */
@Controller('products')
export class CatalogController {
  constructor(
    private readonly inventory: InventoryClient,
    @Inject(DEMO_CLOCK) private readonly clock: Clock,
  ) {}

  /** 5 requests per 10 s (policy `public-api`): the 6th gets 429 with Retry-After. */
  @Get()
  @Resilient('public-api')
  list(): readonly Product[] {
    return PRODUCTS;
  }

  /** Product and live stock; the inventory call is breaker-protected, retried once and bounded to 500 ms. */
  @Get(':sku')
  async product(@Param('sku') sku: string): Promise<Product & { stock: number }> {
    const product = find(sku);
    return { ...product, stock: await this.inventory.stock(sku) };
  }

  /** Stock through a hedged read: compare `tookMs` with the slow path switched on. */
  @Get(':sku/stock')
  async stock(@Param('sku') sku: string): Promise<{ sku: string; stock: number; tookMs: number }> {
    find(sku);
    const started = this.clock.now();
    const stock = await this.inventory.stockHedged(sku);
    return { sku, stock, tookMs: Math.round(this.clock.now() - started) };
  }
}

function find(sku: string): Product {
  const product = PRODUCTS.find((p) => p.sku === sku);
  // A 404 is the handler's own answer: Ballast passes it through unchanged, and it is healthy for the breaker.
  if (product === undefined) throw new NotFoundException(`No product '${sku}'`);
  return product;
}
