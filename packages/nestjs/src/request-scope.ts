import { HttpException } from '@nestjs/common';
import { ErrorCode, bindCriticality, withDeadline, type Clock } from '@ballast/core';
import type { CriticalityLevel } from './criticality-level';

/** The default cap on an inbound budget (1 day): a larger one is a unit mistake or a hostile header. */
export const DEFAULT_MAX_INBOUND_BUDGET = 86_400_000;

/** What {@link parseBudget} returns for a header that is not a number of ms (ignored, with a warning). */
export const MALFORMED = Symbol('malformed');

/**
 * Parses a deadline header: a number of ms, fractions and a sign allowed (`-5` is a budget already spent), capped at
 * `max`. A budget ≤ 0 is the caller saying it has given up: the request is answered 504 without running the handler
 * (SPEC §14.4). Anything else (`abc`, `1e3`, `Infinity`, an empty value) is {@link MALFORMED}: ignored, never an error
 * for the caller. @internal
 */
export function parseBudget(
  value: string | undefined,
  max: number = DEFAULT_MAX_INBOUND_BUDGET,
): number | undefined | typeof MALFORMED {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (!/^-?\d+(\.\d+)?$/.test(trimmed)) return MALFORMED;
  const ms = Number(trimmed);
  // 10 kB of digits parses to Infinity: a budget larger than any cap, so capped like any other.
  return ms > max ? max : ms;
}

/**
 * The answer to a request whose inbound budget is ≤ 0: 504 with the body a deadline exceeded inside a call gets
 * (http-error-mapping.ts), without running the handler. @internal
 */
export function inboundDeadlineExceeded(): HttpException {
  return new HttpException(
    {
      statusCode: 504,
      error: 'Gateway Timeout',
      code: ErrorCode.DEADLINE_EXCEEDED,
      message: 'The request deadline was exceeded.',
    },
    504,
  );
}

/**
 * Runs `fn` with the request's deadline and criticality bound (AsyncLocalStorage, core's `withDeadline` and
 * `bindCriticality`), so everything it awaits — the policy's strategies, decorated providers, nested runs — sees
 * them. The deadline is measured on the Resilience clock, which is what the strategies read.
 */
export function inScope<T>(
  budget: number | undefined,
  criticality: CriticalityLevel | undefined,
  clock: Clock,
  fn: () => T,
): T {
  if (budget === undefined) return criticality === undefined ? fn() : bindCriticality(criticality, fn);
  if (criticality === undefined) return withDeadline(budget, fn, clock);
  return withDeadline(budget, () => bindCriticality(criticality, fn), clock);
}
