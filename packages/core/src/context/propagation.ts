import { ErrorCode, ResilienceError } from '../errors/resilience-error';
import { formatValue } from '../validation/options-validator';
import { contextStorage } from './context-storage';

/**
 * Deadline and criticality across service boundaries (SPEC §14.4), after gRPC's deadline propagation and the
 * criticality classes of Google's SRE book (ch. 21–22): what is left of the ambient budget, and the ambient
 * criticality, travel as request headers, so the next hop stops working for a caller that has given up and keeps
 * shedding in the right order. Budgets are relative (ms left), never absolute times: hosts' clocks disagree.
 */

/** The header names, defaulting to `x-deadline-budget-ms` and `x-criticality` (the inbound names of SPEC §9). */
export interface PropagationHeaderNames {
  readonly deadline?: string | undefined;
  readonly criticality?: string | undefined;
}

/** `best_effort` … `critical`: the criticality's lowercase name, by level. */
const CRITICALITY_NAMES = ['best_effort', 'degraded', 'normal', 'critical'] as const;
/** An HTTP header name (RFC 9110 token). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** The header names to write, checked (a configuration error names each bad one). @internal */
export function headerNames(names: PropagationHeaderNames | undefined): {
  deadline: string;
  criticality: string;
} {
  const given = (names ?? {}) as Record<string, unknown>;
  const problems: string[] = [];
  if (typeof given !== 'object' || given === null)
    problems.push(`names must be an object { deadline?, criticality? }, got ${formatValue(names)}`);
  const pick = (field: 'deadline' | 'criticality', fallback: string): string => {
    const v = typeof given === 'object' && given !== null ? given[field] : undefined;
    if (v === undefined) return fallback;
    if (typeof v === 'string' && TOKEN.test(v)) return v.toLowerCase();
    problems.push(`names.${field} must be an HTTP header name, got ${formatValue(v)}`);
    return fallback;
  };
  const out = {
    deadline: pick('deadline', 'x-deadline-budget-ms'),
    criticality: pick('criticality', 'x-criticality'),
  };
  if (problems.length > 0)
    throw new ResilienceError({
      kind: 'configuration',
      message: `Invalid propagation header names: ${problems.join('; ')}`,
    });
  return out;
}

/**
 * The headers that carry the ambient deadline and criticality to the next service: the remaining budget in whole ms
 * (rounded down, at least 0) when a deadline is bound (`withDeadline`, an inbound budget header), and the
 * criticality's lowercase name when one is bound (`bindCriticality`, `@Criticality`, an inbound header). Empty
 * outside any such scope. Names default to `x-deadline-budget-ms` and `x-criticality`.
 */
export function propagationHeaders(names?: PropagationHeaderNames): Record<string, string> {
  const n = headerNames(names);
  const headers: Record<string, string> = {};
  const frame = contextStorage.getStore();
  if (frame === undefined) return headers;
  if (frame.deadline !== undefined && frame.deadlineClock !== undefined)
    headers[n.deadline] = String(Math.max(0, Math.floor(frame.deadline - frame.deadlineClock.now())));
  if (frame.criticality !== undefined) headers[n.criticality] = CRITICALITY_NAMES[frame.criticality]!;
  return headers;
}

/** The error an outbound request ends with when the ambient deadline does (the kind and code a call gets). */
export function deadlineExceeded(): ResilienceError {
  return new ResilienceError({
    kind: 'timeout',
    code: ErrorCode.DEADLINE_EXCEEDED,
    message: 'The deadline passed before the outbound request completed',
  });
}

/**
 * What an outbound request should follow: the ambient deadline (its ms left and the clock that measures them) and
 * the ambient call's signal. `undefined` parts are not bound. @internal
 */
export function ambientLimits(): {
  remaining: number | undefined;
  clock: { setTimeout(cb: () => void, ms: number): unknown; clearTimeout(h: unknown): void } | undefined;
  signal: AbortSignal | undefined;
} {
  const frame = contextStorage.getStore();
  if (frame === undefined) return { remaining: undefined, clock: undefined, signal: undefined };
  const clock = frame.deadlineClock;
  const remaining =
    frame.deadline !== undefined && clock !== undefined ? frame.deadline - clock.now() : undefined;
  return { remaining, clock, signal: frame.call?.signal };
}

/**
 * An AbortSignal that aborts when `signals` do or when `remaining` ms pass on `clock` (with the deadline error), and
 * `dispose`, which removes the timer; for an outbound request bound to the ambient deadline and call. @internal
 */
export function linkedRequestSignal(
  signals: readonly (AbortSignal | undefined | null)[],
  remaining: number | undefined,
  clock: { setTimeout(cb: () => void, ms: number): unknown; clearTimeout(h: unknown): void } | undefined,
): { signal: AbortSignal | undefined; dispose: () => void } {
  const parts = signals.filter((s): s is AbortSignal => s !== undefined && s !== null);
  let timer: unknown;
  if (remaining !== undefined && clock !== undefined) {
    const deadline = new AbortController();
    timer = clock.setTimeout(() => deadline.abort(deadlineExceeded()), Math.max(0, remaining));
    parts.push(deadline.signal);
  }
  const dispose = (): void => {
    if (timer !== undefined) clock!.clearTimeout(timer);
    timer = undefined;
  };
  if (parts.length === 0) return { signal: undefined, dispose };
  return { signal: parts.length === 1 ? parts[0] : AbortSignal.any(parts), dispose };
}

type Fetch = typeof globalThis.fetch;

/**
 * `fetchImpl` (default `globalThis.fetch`), sending the ambient deadline and criticality as headers
 * ({@link propagationHeaders}; a header the caller set wins) and aborting the request when the ambient deadline
 * passes or the ambient call's signal aborts (besides the caller's own `signal`). A request made after the deadline
 * has passed is not sent: it rejects at once with `timeout` / `deadline_exceeded`, as a call would.
 */
export function withPropagation(fetchImpl: Fetch = globalThis.fetch, names?: PropagationHeaderNames): Fetch {
  if (typeof fetchImpl !== 'function')
    throw new ResilienceError({
      kind: 'configuration',
      message: `Invalid withPropagation() call: fetchImpl must be a fetch function, got ${formatValue(fetchImpl)}`,
    });
  const n = headerNames(names);
  const propagating = async (input: Parameters<Fetch>[0], init?: Parameters<Fetch>[1]): Promise<Response> => {
    const { remaining, clock, signal: ambient } = ambientLimits();
    if (remaining !== undefined && remaining <= 0) throw deadlineExceeded();
    const add = propagationHeaders(n);
    const request = typeof Request !== 'undefined' && input instanceof Request ? input : undefined;
    const headers = new Headers(init?.headers ?? request?.headers);
    for (const [name, value] of Object.entries(add)) if (!headers.has(name)) headers.set(name, value);
    const own = init?.signal ?? request?.signal;
    const linked = linkedRequestSignal([own, ambient], remaining, clock);
    try {
      return await fetchImpl(input, {
        ...init,
        headers,
        ...(linked.signal === undefined ? {} : { signal: linked.signal }),
      });
    } finally {
      linked.dispose();
    }
  };
  return propagating as Fetch;
}

/** An outbound request's abort signal and the means to let go of it (SPEC §2: nothing outlives its call). */
export interface PropagationSignal {
  /** Aborts when the ambient deadline ends, the ambient call's signal aborts, or `callerSignal` aborts. */
  readonly signal: AbortSignal;
  /** Clears the deadline timer and removes the listeners; call it when the request settles. Idempotent. */
  release(): void;
}

/**
 * For integrations (undici, gRPC, a client of your own): a signal that follows the ambient deadline and the ambient
 * call's signal (`currentSignal()`), plus the caller's own `callerSignal`. `undefined` when there is nothing ambient
 * to follow: the caller's signal is then used as it is. The deadline timer runs on the clock that measured the
 * deadline (a FakeClock timer in tests). The abort reason is a `deadline_exceeded` ResilienceError, or the reason of
 * the signal that aborted.
 */
export function propagationSignal(callerSignal?: AbortSignal | null): PropagationSignal | undefined {
  const { remaining, clock, signal: ambient } = ambientLimits();
  if (ambient === undefined && (remaining === undefined || clock === undefined)) return undefined;
  const controller = new AbortController();
  const sources = [ambient, callerSignal ?? undefined].filter((s): s is AbortSignal => s !== undefined);
  for (const source of sources)
    if (source.aborted) {
      controller.abort(source.reason);
      return { signal: controller.signal, release: () => undefined };
    }
  if (remaining !== undefined && remaining <= 0) {
    controller.abort(deadlineExceeded());
    return { signal: controller.signal, release: () => undefined };
  }
  let timer: unknown;
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    if (timer !== undefined) clock!.clearTimeout(timer);
    for (const source of sources) source.removeEventListener('abort', onAbort);
  };
  function onAbort(this: AbortSignal): void {
    release();
    controller.abort(this.reason);
  }
  if (remaining !== undefined && clock !== undefined)
    timer = clock.setTimeout(() => {
      timer = undefined;
      release();
      controller.abort(deadlineExceeded());
    }, remaining);
  for (const source of sources) source.addEventListener('abort', onAbort, { once: true });
  return { signal: controller.signal, release };
}
