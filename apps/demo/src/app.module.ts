import { Module } from '@nestjs/common';
import { ResilienceAdminModule, ResilienceModule } from '@ballast/nestjs';
import { AdminTokenGuard } from './admin-token.guard';
import { BackendController } from './inventory/backend.controller';
import { CatalogController } from './catalog/catalog.controller';
import { ChainController } from './chain/chain.controller';
import { DEMO_CLOCK, DemoConfigModule } from './demo-config';
import { DEMO_POLICIES } from './demo-policies';
import { DemoStores, DemoStoresModule } from './demo-stores';
import { HealthController } from './health.controller';
import { InventoryBackend } from './inventory/inventory-backend';
import { InventoryClient } from './inventory/inventory.client';
import { MetricsModule } from './metrics';
import { OrdersController } from './orders/orders.controller';
import type { Clock } from '@ballast/core';

@Module({
  imports: [
    DemoConfigModule,
    // forRootAsync: the stores (in-memory, or Redis when REDIS_URL is set) and the clock come from DI.
    ResilienceModule.forRootAsync({
      imports: [DemoStoresModule],
      inject: [DemoStores, DEMO_CLOCK],
      // Waits (briefly) for Redis first: the fleet's standing overrides are read before the first request.
      useFactory: async (stores: DemoStores, clock: Clock) => ({
        policies: DEMO_POLICIES,
        stores: await stores.connected(),
        clock,
        headers: { deadline: 'x-deadline-budget-ms', criticality: 'x-criticality' },
      }),
    }),
    // dashboard: the live page at /resilience/ui (its data behind the same token).
    ResilienceAdminModule.forRoot({ guard: AdminTokenGuard, dashboard: true }),
    MetricsModule,
  ],
  controllers: [HealthController, CatalogController, OrdersController, BackendController, ChainController],
  providers: [InventoryBackend, InventoryClient],
})
export class AppModule {}
