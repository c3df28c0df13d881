import { ErrorCode, ResilienceError, isResilienceError } from '../errors/resilience-error';

/** Wraps a failure of the control store as the error fleet writes answer with (HTTP 503). */
export function storeUnavailable(operation: string, cause: unknown): ResilienceError {
  if (isResilienceError(cause) && cause.code === ErrorCode.STORE_UNAVAILABLE) return cause;
  return new ResilienceError({
    kind: 'infrastructure',
    code: ErrorCode.STORE_UNAVAILABLE,
    message: `The control store did not answer admin.${operation}(): nothing was changed`,
    cause,
  });
}

/** A compare-and-set retune whose `ifVersion` is not the policy's version (HTTP 409). */
export function versionConflict(
  policy: string,
  version: number,
  wanted: number | undefined,
): ResilienceError {
  return new ResilienceError({
    kind: 'conflict',
    code: ErrorCode.VERSION_CONFLICT,
    message: `Policy '${policy}' is at version ${version}, not ${String(wanted)}: nothing was changed`,
    details: { policy, version },
  });
}
