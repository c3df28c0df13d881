import { ErrorCode, ResilienceError } from '../errors/resilience-error';
import { formatValue } from './options-validator';

/**
 * The arguments of one `run` / `admitStream` call, checked at the door. TypeScript callers cannot get them wrong, but
 * JavaScript callers and values read from configuration can, and a bad argument would otherwise surface as a
 * TypeError from deep inside the pipeline (`signal.addEventListener is not a function`) naming no argument at all —
 * or not at all (a numeric route silently became its own breaker key). The check is a handful of `typeof` tests
 * on the hot path; the error is only built for a call that fails it. @internal
 */
export function validCallArguments(fn: unknown, options: object): boolean {
  const { route, signal, fallback, hedge } = options as Record<string, unknown>;
  return (
    typeof fn === 'function' &&
    (route === undefined || typeof route === 'string') &&
    (signal === undefined || isAbortSignal(signal)) &&
    (fallback === undefined || typeof fallback === 'function') &&
    (hedge === undefined || typeof hedge === 'boolean')
  );
}

/**
 * The rejection for a call whose arguments fail {@link validCallArguments} or name no registered policy: one
 * `configuration` error naming every bad argument, its constraint and the value given. A call whose only fault is
 * an unregistered policy name keeps the specific `unknown_policy` code. `run` passes its options (which hold the
 * policy name); `admitStream` its policy name and options separately. @internal
 */
export function callArgumentsError(
  method: 'run' | 'admitStream',
  fn: unknown,
  options: unknown,
  policyKnown: boolean,
  policyArgument?: unknown,
): ResilienceError {
  const problems: string[] = [];
  if (method === 'run' && typeof fn !== 'function')
    problems.push(`fn must be a function, got ${formatValue(fn)}`);
  const isObject = typeof options === 'object' && options !== null;
  if (!isObject)
    problems.push(
      method === 'run'
        ? `options must be an object naming a policy, got ${formatValue(options)}`
        : `options must be an object ({ route? }) or undefined, got ${formatValue(options)}`,
    );
  const given = (isObject ? options : {}) as Record<string, unknown>;
  const { route, signal, fallback, hedge } = given;
  const policy = method === 'run' ? given['policy'] : policyArgument;
  const policyPath = method === 'run' ? 'options.policy' : 'policy';
  if (typeof policy !== 'string' && (isObject || method === 'admitStream'))
    problems.push(`${policyPath} must be the name of a registered policy, got ${formatValue(policy)}`);
  if (route !== undefined && typeof route !== 'string')
    problems.push(`options.route must be a string or undefined, got ${formatValue(route)}`);
  if (signal !== undefined && !isAbortSignal(signal))
    problems.push(`options.signal must be an AbortSignal or undefined, got ${formatValue(signal)}`);
  if (fallback !== undefined && typeof fallback !== 'function')
    problems.push(`options.fallback must be a function or undefined, got ${formatValue(fallback)}`);
  if (hedge !== undefined && typeof hedge !== 'boolean')
    problems.push(`options.hedge must be a boolean or undefined, got ${formatValue(hedge)}`);
  const name = typeof policy === 'string' ? policy : undefined;
  const key = typeof route === 'string' ? route : undefined;
  if (problems.length === 0 && !policyKnown)
    return new ResilienceError({
      kind: 'configuration',
      code: ErrorCode.UNKNOWN_POLICY,
      message: `Unknown policy '${String(policy)}'`,
      details: { policy },
      // Like every rejection the executor raises (SPEC §11.2).
      ...(name === undefined ? {} : { policy: name }),
      ...(key === undefined ? {} : { route: key }),
    });
  if (name !== undefined && !policyKnown)
    problems.push(`${policyPath} names no registered policy: '${name}'`);
  return callError(method, problems, name, key);
}

function callError(
  method: string,
  problems: readonly string[],
  policy: string | undefined,
  route: string | undefined,
): ResilienceError {
  return new ResilienceError({
    kind: 'configuration',
    message: `Invalid ${method}() call: ${problems.join('; ')}`,
    details: { problems },
    ...(policy === undefined ? {} : { policy }),
    ...(route === undefined ? {} : { route }),
  });
}

/** Duck-typed, so a signal from another realm or a polyfill is accepted as the executor only uses these. */
function isAbortSignal(value: unknown): value is AbortSignal {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as AbortSignal).aborted === 'boolean' &&
    typeof (value as AbortSignal).addEventListener === 'function' &&
    typeof (value as AbortSignal).removeEventListener === 'function'
  );
}
