import type { ExecutionContext } from '@nestjs/common';
import { ErrorCode, ResilienceError, formatValue } from '@ballast/core';
import type { ResilienceBinding, ResilientCall, ResilientRequest, RouteFunction } from './resilience-binding';

/** The route of one call, or why there is none: the route function threw or answered something that is no route. */
export type CallRoute =
  | { readonly ok: true; readonly route: string | undefined }
  | { readonly ok: false; readonly error: ResilienceError };

/** The decorated method, named in the error: its class (anything with a `name`) and the method's name. */
export interface DecoratedMethod {
  readonly owner: { readonly name?: string } | undefined;
  readonly method: string | symbol;
}

/**
 * The route of one call under `binding`, whose route is the function `route` (SPEC §14.3): its answer when it is a
 * string (the empty string included: core keys it like any other, as it does a fixed `route: ''`) or `undefined`
 * (the policy's default key, as without `route`). A function that throws or answers anything else is a bug in the
 * application, not a failure of the dependency: the call is refused with `internal` / `callback_failed` before it
 * reaches the policy, so it holds no state (no key, no permit, no slot) and the method never runs — as core does for
 * a retry `delay` or a `classifyResult` that fails. Callers ask only for function routes (`typeof binding.route`),
 * so a fixed route builds nothing per call.
 */
export function routeOfCall(
  binding: ResilienceBinding,
  route: RouteFunction,
  call: ResilientCall,
  where: DecoratedMethod,
): CallRoute {
  let answer: unknown;
  try {
    answer = route(call);
  } catch (error) {
    return { ok: false, error: routeFailed(binding, where, `threw ${describeThrown(error)}`, error) };
  }
  if (answer === undefined || typeof answer === 'string') return { ok: true, route: answer };
  return {
    ok: false,
    error: routeFailed(binding, where, `answered ${formatValue(answer)}; expected a string or undefined`),
  };
}

/**
 * {@link routeOfCall} for a handler Nest calls through its pipeline: the call is Nest's arguments
 * (`context.getArgs()`), the `ExecutionContext` and, on HTTP, the request.
 */
export function handlerRoute(
  binding: ResilienceBinding,
  route: RouteFunction,
  context: ExecutionContext,
  request: unknown,
): CallRoute {
  return routeOfCall(
    binding,
    route,
    { args: context.getArgs(), request: request as ResilientRequest | undefined, context },
    { owner: context.getClass(), method: context.getHandler().name },
  );
}

function routeFailed(
  binding: ResilienceBinding,
  where: DecoratedMethod,
  what: string,
  cause?: unknown,
): ResilienceError {
  const decorator = binding.hedge ? '@Hedged' : '@Resilient';
  const method = `${where.owner?.name || 'anonymous class'}.${String(where.method)}`;
  return new ResilienceError({
    kind: 'internal',
    code: ErrorCode.CALLBACK_FAILED,
    message: `${decorator}('${binding.policy}') on ${method}: options.route ${what}`,
    policy: binding.policy,
    ...(cause === undefined ? {} : { cause }),
  });
}

/** A thrown value as a message can show it: an Error's name and message, anything else as its value. */
function describeThrown(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return formatValue(error);
}
