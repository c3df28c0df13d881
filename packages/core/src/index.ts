// @ballast/core — curated public API. Internal modules (executor, bulkhead runtime, validator) are not exported.

// Executor and control plane
export { Resilience, RUN_SETTLED } from './resilience';
export { AMBIENT_SIGNAL, ON_ABORT, type AbortHook } from './executor/attempt-context';
export type { ResilienceOptions } from './resilience';
export type { StreamPermit } from './executor/stream-admission';
export type { CallSettler } from './executor/invocation';
export type { CallContext, RunOptions, Fallback, Classifier, ResilienceAdmin } from './resilience-types';
export type { ResilienceStateSnapshot } from './admin/snapshot';

// Policies
export { ResiliencePolicy } from './policy/resilience-policy';
export { POLICY_MODES, type PolicyMode } from './policy/policy-mode';
export type { ResiliencePolicyOptions } from './policy/resilience-policy';
export { BUILTIN_POLICIES, TRANSIENT_POLICY, OCC_POLICY } from './policy/builtin-policies';
export { policyFromSpec, policyToSpec } from './policy/policy-spec';
export type {
  PolicySpec,
  StrategySpec,
  RetrySpec,
  HedgeSpec,
  BackoffSpec,
  RetryBudgetSpec,
  ChaosSpec,
} from './policy/policy-spec';
export type { Violation } from './validation/options-validator';
/** For store and integration authors: renders a given value the way Ballast's configuration errors do. */
export { formatValue } from './validation/options-validator';

// Strategies
export { RateLimitStrategy } from './strategies/rate-limit-strategy';
export { BulkheadStrategy } from './strategies/bulkhead-strategy';
export { AdaptiveBulkheadStrategy } from './strategies/adaptive-bulkhead-strategy';
export { GradientBulkheadStrategy } from './strategies/gradient-bulkhead-strategy';
export { CircuitBreakerStrategy } from './strategies/circuit-breaker-strategy';
export { AdaptiveThrottleStrategy } from './strategies/adaptive-throttle-strategy';
export { RetryStrategy } from './strategies/retry-strategy';
export type { RetryOptions, ResolvedRetryOptions } from './strategies/retry-strategy';
export { BackoffStrategy } from './strategies/backoff-strategy';
export { RetryBudget, RetryBudgetState } from './strategies/retry-budget';
export { TimeoutStrategy } from './strategies/timeout-strategy';
export { HedgeStrategy } from './strategies/hedge-strategy';
export type { HedgeStrategyOptions, ResolvedHedgeStrategyOptions } from './strategies/hedge-strategy';
export { FallbackStrategy } from './strategies/fallback-strategy';
export type { FallbackOptions, ResolvedFallbackOptions } from './strategies/fallback-strategy';
export { ChaosStrategy, DEFAULT_CHAOS_FAULT_MESSAGE } from './strategies/chaos-strategy';
export type {
  ChaosOptions,
  ChaosFaultOptions,
  ChaosLatencyOptions,
  ChaosOutcomeOptions,
  ResolvedChaosOptions,
  ResolvedChaosFault,
  ResolvedChaosLatency,
  ResolvedChaosOutcome,
  ChaosSettingsView,
} from './strategies/chaos-strategy';
export type { ChaosPatch } from './admin/chaos-settings';
export type { Strategy, AnyBulkheadStrategy } from './strategies/strategy';
export type {
  Duration,
  StrategyType,
  JitterMode,
  RetryableKind,
  RateLimitOptions,
  ResolvedRateLimitOptions,
  QueueOptions,
  ResolvedQueueOptions,
  BulkheadOptions,
  ResolvedBulkheadOptions,
  AdaptiveBulkheadOptions,
  ResolvedAdaptiveBulkheadOptions,
  GradientBulkheadOptions,
  ResolvedGradientBulkheadOptions,
  CircuitBreakerOptions,
  ResolvedCircuitBreakerOptions,
  AdaptiveThrottleOptions,
  ResolvedAdaptiveThrottleOptions,
  BackoffOptions,
  ResolvedBackoffOptions,
  RetryBudgetOptions,
  ResolvedRetryBudgetOptions,
  TimeoutOptions,
  ResolvedTimeoutOptions,
  HedgeOptions,
  ResolvedHedgeOptions,
} from './strategies/types';

// Errors and classification
export {
  ResilienceError,
  isResilienceError,
  ErrorCode,
  EXCEPTION_KINDS,
  RETRYABLE_KINDS,
} from './errors/resilience-error';
export type { ExceptionKind, ResilienceErrorInit } from './errors/resilience-error';
export { classify, retryAfterOf, composeClassifier } from './errors/classify';
export { outcomeClass } from './errors/outcome-class';
export { classifyHttpResponse, registerResultClassifier } from './errors/classify-result';
export type { ResultVerdict, ResultClassifier } from './errors/classify-result';
export type { OutcomeClass } from './errors/outcome-class';

// Time, context
export { systemClock } from './time/clock';
export type { Clock, TimerHandle, Random } from './time/clock';
export { parseDuration } from './time/duration';
export { withDeadline, remainingTime } from './context/deadline';
export { bindCriticality, currentCriticality, Criticality } from './context/criticality';
export { currentSignal } from './context/context-storage';
export { propagationHeaders, withPropagation, type PropagationHeaderNames } from './context/propagation';
export { installAxiosPropagation, type AxiosLike } from './context/axios-propagation';
export { propagationSignal, type PropagationSignal } from './context/propagation';
export {
  formatGrpcTimeout,
  grpcPropagation,
  grpcPropagationInterceptor,
  parseGrpcTimeout,
  type GrpcInterceptingCallLike,
  type GrpcInterceptorOptionsLike,
  type GrpcMetadataLike,
  type GrpcPropagationInterceptor,
} from './context/grpc-propagation';
export {
  undiciPropagation,
  type UndiciDispatch,
  type UndiciDispatchOptions,
  type UndiciHandler,
  type UndiciInterceptor,
} from './context/propagation-integrations';
export { keepSignalWatched } from './executor/signal-watch';

// Events
export { EventType } from './events';
export type {
  ResilienceEvent,
  ResilienceEventType,
  ResilienceListener,
  CallOutcome,
  ChaosInjection,
  StoreName,
} from './events';

// Fleet control plane (SPEC §14.1)
export { InMemoryControlStore } from './control/in-memory-control-store';
export type { InMemoryControlStoreOptions } from './control/in-memory-control-store';
export type {
  ControlStore,
  ControlState,
  ControlChange,
  ControlAction,
  ControlWriteResult,
  ControlSubscription,
  ForcedOverride,
  RetunedPolicy,
  PolicySetting,
  SettingAction,
  ResetRecord,
  AuditEntry,
  ReplicaInfo,
  ReplicaRecord,
} from './control/control-store';
export type {
  AdminScope,
  AdminActionOptions,
  ForceOpenOptions,
  RetuneOptions,
} from './admin/admin-arguments';

// Stores
export { stateKey, BREAKER_BUCKETS } from './stores/ports';
export type {
  MaybePromise,
  StateKey,
  BreakerState,
  BreakerParams,
  BreakerAdmission,
  BreakerOutcome,
  BreakerPermit,
  BreakerRecordResult,
  BreakerSnapshot,
  BreakerTransition,
  CircuitBreakerStore,
  RateLimitParams,
  RateLimitResult,
  RateLimitStore,
  DigestParams,
  LatencyDigestStore,
  ResilienceStores,
} from './stores/ports';
export { InMemoryCircuitBreakerStore } from './stores/in-memory-circuit-breaker-store';
export { CircuitStateMachine } from './stores/circuit-state-machine';
export { InMemoryRateLimitStore } from './stores/in-memory-rate-limit-store';
export { InMemoryLatencyDigestStore } from './stores/in-memory-latency-digest-store';
