// The HTTP section's rows, shared by http.bench.mjs (CPU time) and http-instructions.bench.mjs (instructions).
// [name, label, server process, app, route]. The 'noctx' process runs ResilienceModule with `ambientContext: false`:
// no AsyncLocalStorage in it at all, so its rows (the application without Ballast and the peers' included) are
// untaxed. The 'ctx' process runs
// the default, whose AsyncLocalStorage makes every promise of that process slower (Node 20), its plain row included.
export const VARIANTS = [
  ['bare', 'no Ballast', 'noctx', 'bare', '/plain'],
  ['plain', 'ResilienceModule, handler undecorated', 'ctx', 'app', '/plain'],
  ['resilient', "`@Resilient('bench')`: rate limit + breaker + retry + timeout", 'ctx', 'app', '/resilient'],
  ['req', 'ResilienceModule, handler undecorated taking the request (`@Req()`)', 'ctx', 'app', '/req'],
  ['plain-noctx', 'ResilienceModule `ambientContext: false`, handler undecorated', 'noctx', 'app', '/plain'],
  ['resilient-noctx', "`@Resilient('bench')`, `ambientContext: false`", 'noctx', 'app', '/resilient'],
  [
    'req-noctx',
    'ResilienceModule `ambientContext: false`, handler taking the request (`@Req()`)',
    'noctx',
    'app',
    '/req',
  ],
  [
    'opossum',
    'no Ballast, the handler body through opossum (breaker + timeout 1 s)',
    'opossum',
    'bare',
    '/opossum',
  ],
  [
    'cockatiel',
    'no Ballast, the handler body through cockatiel `wrap(breaker, retry(3), timeout(1 s))`',
    'cockatiel',
    'bare',
    '/cockatiel',
  ],
];
