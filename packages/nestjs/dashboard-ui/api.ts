// Requests to the admin API: the token goes in the Authorization header, never in a URL.

const TOKEN_KEY = 'ballast.dashboard.token';

/** The admin API's base: this page is `{base}/ui`, whatever global prefix the application has. */
export const apiBase = (): string => location.pathname.replace(/\/ui\/?$/, '');

export const token = {
  get: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  set: (value: string): void => sessionStorage.setItem(TOKEN_KEY, value),
  clear: (): void => sessionStorage.removeItem(TOKEN_KEY),
};

export function authHeaders(): Record<string, string> {
  const t = token.get();
  return t === null ? {} : { Authorization: `Bearer ${t}` };
}

export interface ApiResult {
  readonly ok: boolean;
  readonly status: number;
  readonly body: unknown;
}

/** One admin request; the body, when given, as JSON. Network failures read as status 0. */
export async function api(method: string, path: string, body?: unknown): Promise<ApiResult> {
  const headers: Record<string, string> = { ...authHeaders(), Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  try {
    const res = await fetch(`${apiBase()}${path}`, {
      method,
      headers,
      cache: 'no-store',
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    return { ok: res.ok, status: res.status, body: parsed };
  } catch (error) {
    return { ok: false, status: 0, body: { message: `The request failed: ${String(error)}` } };
  }
}

/** A refusal or error as one line an operator can act on. */
export function describeFailure(r: ApiResult): string {
  if (r.status === 401 || r.status === 403)
    return `Refused (${r.status}): the admin token is missing or wrong. Enter it above.`;
  const b = r.body as { message?: unknown } | undefined;
  const message = typeof b?.message === 'string' ? b.message : JSON.stringify(r.body);
  return r.status === 0 ? message : `Failed (${r.status}): ${message}`;
}
