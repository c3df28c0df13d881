import { ResilienceError } from '../errors/resilience-error';
import { formatValue } from '../validation/options-validator';
import {
  ambientLimits,
  deadlineExceeded,
  headerNames,
  linkedRequestSignal,
  propagationHeaders,
  type PropagationHeaderNames,
} from './propagation';

/**
 * The parts of an axios instance propagation touches, structurally (core depends on no HTTP client): its request and
 * response interceptor lists. `axios`, `axios.create()` and `@nestjs/axios`'s `HttpService.axiosRef` all fit.
 */
export interface AxiosLike {
  readonly interceptors: {
    // `never` parameters: any axios version's signature fits; the calls below pass our own callbacks.
    readonly request: { use: (...args: never[]) => number; eject: (id: number) => void };
    readonly response: { use: (...args: never[]) => number; eject: (id: number) => void };
  };
}

/** A request config as axios hands it to a request interceptor. */
interface RequestConfig {
  headers?: { has?(name: string): boolean; set?(name: string, value: string): unknown } & Record<
    string,
    unknown
  >;
  signal?: AbortSignal | undefined;
}

const disposers = new WeakMap<object, () => void>();

/**
 * Installs deadline and criticality propagation on an axios instance (SPEC §14.4): every request made inside a
 * deadline or criticality scope carries {@link propagationHeaders} (a header the caller set wins), and its signal
 * follows the ambient deadline and call, besides the request's own `signal`; a request made once the deadline has
 * passed is not sent (it rejects with `timeout` / `deadline_exceeded`). The deadline timer is removed when the
 * response (or the error) arrives. Returns a function that uninstalls it. Installing twice on one instance installs
 * once.
 */
export function installAxiosPropagation(axios: AxiosLike, names?: PropagationHeaderNames): () => void {
  const interceptors = (axios as { interceptors?: AxiosLike['interceptors'] } | null)?.interceptors;
  if (typeof interceptors?.request?.use !== 'function' || typeof interceptors?.response?.use !== 'function')
    throw new ResilienceError({
      kind: 'configuration',
      message: `Invalid installAxiosPropagation() call: axios must be an axios instance (with interceptors), got ${formatValue(axios)}`,
    });
  if (installed.has(axios)) return installed.get(axios)!;
  const n = headerNames(names);
  const request = interceptors.request.use(((config: RequestConfig) => {
    const { remaining, clock, signal: ambient } = ambientLimits();
    if (remaining === undefined && ambient === undefined && propagationHeadersEmpty()) return config;
    if (remaining !== undefined && remaining <= 0) throw deadlineExceeded();
    const headers = (config.headers ??= {} as NonNullable<RequestConfig['headers']>);
    for (const [name, value] of Object.entries(propagationHeaders(n))) {
      const present = typeof headers.has === 'function' ? headers.has(name) : hasHeader(headers, name);
      if (present) continue;
      if (typeof headers.set === 'function') headers.set(name, value);
      else headers[name] = value;
    }
    const linked = linkedRequestSignal([config.signal, ambient], remaining, clock);
    if (linked.signal !== undefined) config.signal = linked.signal;
    disposers.set(config, linked.dispose);
    return config;
  }) as never);
  const settle = (config: unknown): void => {
    if (typeof config !== 'object' || config === null) return;
    disposers.get(config)?.();
    disposers.delete(config);
  };
  const onResponse = (res: { config?: unknown }): unknown => {
    settle(res?.config);
    return res;
  };
  const onError = (error: { config?: unknown }): Promise<never> => {
    settle(error?.config);
    return Promise.reject(error);
  };
  const response = interceptors.response.use(onResponse as never, onError as never);
  const uninstall = (): void => {
    interceptors.request.eject(request);
    interceptors.response.eject(response);
    installed.delete(axios);
  };
  installed.set(axios, uninstall);
  return uninstall;
}

const installed = new WeakMap<object, () => void>();

function propagationHeadersEmpty(): boolean {
  return Object.keys(propagationHeaders()).length === 0;
}

/** Whether a plain headers object holds `name`, in any case. */
function hasHeader(headers: Record<string, unknown>, name: string): boolean {
  for (const key of Object.keys(headers))
    if (key.toLowerCase() === name && headers[key] !== undefined) return true;
  return false;
}
