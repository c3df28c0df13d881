import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  Controller,
  Get,
  Inject,
  NotFoundException,
  Param,
  Req,
  Res,
  UseGuards,
  type CanActivate,
  type OnModuleDestroy,
  type Type,
} from '@nestjs/common';
import { ErrorCode, Resilience, policyToSpec } from '@ballast/core';
import { ASSETS, SECURITY_HEADERS, SHELL_HTML, readAsset } from './dashboard-assets';
import { DashboardHub } from './dashboard-hub';
import { SseViewer } from './sse-viewer';

/** Express hands over its response (a `ServerResponse`), Fastify a reply around one (`raw`). */
type AdapterResponse = ServerResponse | { raw: ServerResponse; hijack(): unknown };
type AdapterRequest = IncomingMessage | { raw: IncomingMessage };

/** The Node response under either adapter; Fastify is told the handler answers by itself. */
function nodeResponse(res: AdapterResponse): ServerResponse {
  if ('hijack' in res && typeof res.hijack === 'function') {
    res.hijack();
    return res.raw;
  }
  return res as ServerResponse;
}

const nodeRequest = (req: AdapterRequest): IncomingMessage =>
  'raw' in req && req.raw !== undefined ? req.raw : (req as IncomingMessage);

/** The page: its shell and bundled assets, without credentials (a browser sends no bearer token on navigation). */
export class DashboardPageController {
  @Get('ui')
  shell(@Req() req: AdapterRequest, @Res() res: AdapterResponse): void {
    const out = nodeResponse(res);
    const url = nodeRequest(req).url ?? '';
    const pathname = url.split('?')[0] ?? '';
    // `…/ui/` would resolve the shell's relative asset URLs one level too deep: send the browser to `…/ui`.
    if (pathname.endsWith('/')) {
      out.writeHead(308, { ...SECURITY_HEADERS, Location: pathname.replace(/\/+$/, '') });
      out.end();
      return;
    }
    out.writeHead(200, { ...SECURITY_HEADERS, 'Content-Type': 'text/html; charset=utf-8' });
    out.end(SHELL_HTML);
  }

  @Get('ui/assets/:name')
  asset(@Param('name') name: string, @Res() res: AdapterResponse): void {
    const out = nodeResponse(res);
    const bytes = readAsset(name);
    if (bytes === undefined) {
      out.writeHead(404, { ...SECURITY_HEADERS, 'Content-Type': 'text/plain; charset=utf-8' });
      out.end(
        Object.hasOwn(ASSETS, name)
          ? `The dashboard's ${name} is missing: build @ballast/nestjs (npm run build) to bundle the page.`
          : 'Not found',
      );
      return;
    }
    out.writeHead(200, { ...SECURITY_HEADERS, 'Content-Type': ASSETS[name]! });
    out.end(bytes);
  }
}

/** The page's data, behind the admin guard: the event stream, and the spec of a policy for the retune editor. */
export class DashboardDataController implements OnModuleDestroy {
  /** Set per registration by {@link dashboardControllers}. */
  static interval = 1000;
  readonly hub: DashboardHub;

  constructor(@Inject(Resilience) private readonly resilience: Resilience) {
    this.hub = new DashboardHub(resilience, (this.constructor as typeof DashboardDataController).interval);
  }

  @Get('stream')
  stream(@Req() req: AdapterRequest, @Res() res: AdapterResponse): void {
    const out = nodeResponse(res);
    out.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-store',
      'X-Content-Type-Options': 'nosniff',
      // Proxies that buffer (nginx) would hold the events back.
      'X-Accel-Buffering': 'no',
    });
    out.write(`: ballast dashboard\nretry: 1000\n\n`);
    const viewer = new SseViewer(out);
    const detach = this.hub.attach(viewer);
    out.on('close', detach);
    nodeRequest(req).on('close', detach);
  }

  @Get('specs/:policy')
  spec(@Param('policy') policy: string): { policy: string; spec: unknown } {
    const current = this.resilience.policy(policy);
    if (current === undefined)
      throw new NotFoundException({
        statusCode: 404,
        error: 'Not Found',
        code: ErrorCode.UNKNOWN_POLICY,
        message: `Unknown policy '${policy}'`,
      });
    return { policy, spec: policyToSpec(current) };
  }

  onModuleDestroy(): void {
    this.hub.close();
  }
}

/** The dashboard's controllers for one registration: the page open, the data behind `guard` (when there is one). */
export function dashboardControllers(
  path: string,
  guard: Type<CanActivate> | undefined,
  interval: number,
): Type<unknown>[] {
  class ResilienceDashboardPage extends DashboardPageController {}
  Controller(path)(ResilienceDashboardPage);
  class ResilienceDashboardData extends DashboardDataController {
    static override interval = interval;
  }
  Controller(path)(ResilienceDashboardData);
  if (guard !== undefined) UseGuards(guard)(ResilienceDashboardData);
  return [ResilienceDashboardPage, ResilienceDashboardData];
}
