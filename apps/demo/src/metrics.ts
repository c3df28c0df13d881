import {
  Controller,
  Get,
  Injectable,
  Module,
  Req,
  Res,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Resilience } from '@ballast/core';
import { instrumentResilience } from '@ballast/opentelemetry';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';

/**
 * The demo's OpenTelemetry metrics: the SPEC §8 instruments of the application's `Resilience` (provided globally by
 * `ResilienceModule`), served in Prometheus format on the app's own port at `GET /metrics` rather than on the
 * exporter's separate server, so the demo exposes one port.
 */
@Injectable()
export class DemoMetrics implements OnModuleInit, OnApplicationShutdown {
  readonly exporter = new PrometheusExporter({ preventServerStart: true });
  readonly #provider = new MeterProvider({ readers: [this.exporter] });
  #stop: (() => void) | undefined;

  constructor(private readonly resilience: Resilience) {}

  onModuleInit(): void {
    this.#stop = instrumentResilience(this.resilience, {
      meter: this.#provider.getMeter('@ballast/opentelemetry'),
    });
  }

  async onApplicationShutdown(): Promise<void> {
    this.#stop?.();
    this.#stop = undefined;
    await this.#provider.shutdown();
  }
}

/** Fastify wraps Node's objects (`request.raw`, `reply.raw`); Express extends them. */
interface MaybeWrapped<T> {
  readonly raw?: T;
  hijack?: () => void;
}

/** `GET /metrics`: hands the raw request to the Prometheus exporter's own handler (text exposition format). */
@Controller()
export class MetricsController {
  constructor(private readonly metrics: DemoMetrics) {}

  @Get('metrics')
  scrape(
    @Req() req: IncomingMessage & MaybeWrapped<IncomingMessage>,
    @Res() res: ServerResponse & MaybeWrapped<ServerResponse>,
  ): void {
    // Fastify must be told that the handler answers on the raw response itself.
    res.hijack?.();
    this.metrics.exporter.getMetricsRequestHandler(req.raw ?? req, res.raw ?? res);
  }
}

/** Import next to `ResilienceModule.forRoot(...)`; works on the Express and Fastify adapters. */
@Module({ providers: [DemoMetrics], controllers: [MetricsController] })
export class MetricsModule {}
