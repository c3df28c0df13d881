import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { timingSafeEqual } from 'node:crypto';
import { DemoConfig } from './demo-config';

/**
 * Guards the admin API with the bearer token printed at start (`Authorization: Bearer <token>`). The token's holder
 * is the principal `operator` (`request.user`), which the audit trail records as the actor — never the token.
 */
@Injectable()
export class AdminTokenGuard implements CanActivate {
  readonly #expected: Buffer;

  constructor(@Inject(DemoConfig) config: DemoConfig) {
    this.#expected = Buffer.from(`Bearer ${config.adminToken}`);
  }

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<{ headers: Record<string, unknown>; user?: unknown }>();
    const header = request.headers['authorization'];
    if (typeof header !== 'string') return false;
    const given = Buffer.from(header);
    if (given.length !== this.#expected.length || !timingSafeEqual(given, this.#expected)) return false;
    request.user = { id: 'operator' };
    return true;
  }
}
