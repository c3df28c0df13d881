import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { timingSafeEqual } from 'node:crypto';
import { DemoConfig } from './demo-config';

/** Guards the admin API with the bearer token printed at start (`Authorization: Bearer <token>`). */
@Injectable()
export class AdminTokenGuard implements CanActivate {
  readonly #expected: Buffer;

  constructor(@Inject(DemoConfig) config: DemoConfig) {
    this.#expected = Buffer.from(`Bearer ${config.adminToken}`);
  }

  canActivate(context: ExecutionContext): boolean {
    const header = context.switchToHttp().getRequest<{ headers: Record<string, unknown> }>().headers[
      'authorization'
    ];
    if (typeof header !== 'string') return false;
    const given = Buffer.from(header);
    return given.length === this.#expected.length && timingSafeEqual(given, this.#expected);
  }
}
