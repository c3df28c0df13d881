/**
 * Per prototype-wrapped provider method (request-scoped, transient and proxy providers, GraphQL resolvers), the
 * applications that wrapped it, latest last: a call with no instance of its own to name its application runs the
 * latest one's policies. An application leaves the list when it closes (unless it is the only one left), so an
 * application still alive gets its own policies back rather than those of a closed one.
 */
const bindings = new WeakMap<object, object[]>();

/** Binds `method` to `host` (the application bootstrapping now). */
export function bindHost(method: object, host: object): void {
  const hosts = bindings.get(method) ?? [];
  bindings.set(method, hosts);
  const index = hosts.indexOf(host);
  if (index >= 0) hosts.splice(index, 1);
  hosts.push(host);
}

/** The latest application bound to `method`. */
export function latestHost<H extends object>(method: object): H {
  const hosts = bindings.get(method)!;
  return hosts[hosts.length - 1] as H;
}

/** `host` closed: its methods go back to the latest application still alive. */
export function unbindHost(methods: readonly object[], host: object): void {
  for (const method of methods) {
    const hosts = bindings.get(method);
    const index = hosts?.indexOf(host) ?? -1;
    if (hosts !== undefined && hosts.length > 1 && index >= 0) hosts.splice(index, 1);
  }
}
