import type {
  Classifier,
  Clock,
  Duration,
  PolicySpec,
  Random,
  ResiliencePolicy,
  ResilienceStores,
} from '@ballast/core';

/**
 * Names of request headers the interceptor reads (opt-in: nothing is read unless named). Meant for trusted,
 * internal traffic — a public client could otherwise claim `CRITICAL`.
 */
export interface ResilienceHeadersOptions {
  /** Header carrying the caller's remaining budget in ms, e.g. `x-deadline-budget-ms`; binds `withDeadline`. */
  readonly deadline?: string | undefined;
  /** Header carrying a criticality name or number, e.g. `x-criticality: CRITICAL`; binds `bindCriticality`. */
  readonly criticality?: string | undefined;
  /**
   * Cap on an inbound budget (default 1 day): a larger one is bound as this much (a caller cannot grant itself more
   * time than the service allows). A budget ≤ 0 is answered 504 without running the handler; a malformed one is
   * ignored with one warning.
   */
  readonly maxInboundBudget?: Duration | undefined;
  /**
   * Send the deadline and criticality on: every `@nestjs/axios` `HttpService` of the application adds them to its
   * requests (under the names above, or the defaults `x-deadline-budget-ms` / `x-criticality`) and aborts a request
   * when the budget runs out (core's `installAxiosPropagation`); every `@nestjs/microservices` gRPC client provider
   * sends the budget as the call's deadline (`grpc-timeout`) and the criticality as metadata, and cancels the call
   * when the budget runs out or the ambient call aborts (core's `grpcPropagationInterceptor`). Default false.
   */
  readonly propagate?: boolean | undefined;
}

/** A policy given as code or as its JSON spec (`policyFromSpec`), e.g. loaded from a config file. */
export type PolicyDefinition = ResiliencePolicy | PolicySpec | Readonly<Record<string, unknown>>;

/** Options of `ResilienceModule.forRoot` (or the object returned by `forRootAsync`'s factory). */
export interface ResilienceModuleOptions {
  /** Policies by code or JSON spec. The built-ins (`transient`, `occ`) always exist and may be overridden. */
  readonly policies?: readonly PolicyDefinition[] | undefined;
  /** Shared state, e.g. the Redis stores of `@ballast/redis`; in-memory by default. */
  readonly stores?: ResilienceStores | undefined;
  /** Time source; tests inject a FakeClock. */
  readonly clock?: Clock | undefined;
  readonly random?: Random | undefined;
  /** Extends the default error classification. */
  readonly classify?: Classifier | undefined;
  readonly maxKeysPerPolicy?: number | undefined;
  readonly headers?: ResilienceHeadersOptions | undefined;
  /**
   * Core's `ambientContext` (default true): each attempt runs in an AsyncLocalStorage frame, so `currentSignal()`
   * works in handlers and decorated providers. `false` saves Node 20's AsyncLocalStorage promise-hook tax in a
   * service that uses no other AsyncLocalStorage; the header deadline/criticality still bind their own frames.
   */
  readonly ambientContext?: boolean | undefined;
  /** This replica's id in the fleet control plane (`admin.replicas()`, the audit trail); core's default otherwise. */
  readonly replicaId?: string | undefined;
}
