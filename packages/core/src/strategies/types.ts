import type { ExceptionKind } from '../errors/resilience-error';

/**
 * User-facing option shapes and their resolved (validated, defaulted, ms) forms for every strategy (SPEC §4).
 * A `Duration` is a number of ms or a string with a unit: '250ms', '1.5s', '2m', '1h'.
 */
export type Duration = number | string;

/** The JSON `type` of each strategy (SPEC §11.15); also the `type` property of constructed strategies. */
export type StrategyType =
  | 'rateLimit'
  | 'bulkhead'
  | 'adaptiveBulkhead'
  | 'gradientBulkhead'
  | 'circuitBreaker'
  | 'adaptiveThrottle'
  | 'retry'
  | 'timeout'
  | 'chaos';

export type JitterMode = 'none' | 'full' | 'equal' | 'decorrelated';

// --- rate limit ---------------------------------------------------------------------------------------------------
export interface RateLimitOptions {
  permits: number;
  per: Duration;
  burst?: number;
}
export interface ResolvedRateLimitOptions {
  readonly permits: number;
  readonly per: number;
  readonly burst: number;
}

// --- queue options shared by the three bulkheads -------------------------------------------------------------------
export interface QueueOptions {
  /** CoDel target sojourn; shedding at dequeue is on only when set. Needs maxQueue ≥ 1. */
  queueTarget?: Duration;
  queueInterval?: Duration;
  queueAdaptiveLifo?: boolean;
  prioritized?: boolean;
  /**
   * The longest a waiter stays parked (> 0): one still waiting then fails with `infrastructure` /
   * `bulkhead_queue_timeout`. A hard bound per call, where CoDel's `queueTarget` sheds only under congestion.
   */
  maxWait?: Duration;
}
export interface ResolvedQueueOptions {
  readonly maxQueue: number;
  readonly queueTarget: number | undefined;
  readonly queueInterval: number;
  readonly queueAdaptiveLifo: boolean;
  readonly prioritized: boolean;
  /** Optional here so hand-built resolved options (tests, the simulator) need not spell it out. */
  readonly maxWait?: number | undefined;
}

// --- bulkheads ------------------------------------------------------------------------------------------------------
export interface BulkheadOptions extends QueueOptions {
  maxConcurrency: number;
  maxQueue?: number;
}
export interface ResolvedBulkheadOptions extends ResolvedQueueOptions {
  readonly maxConcurrency: number;
}

export interface AdaptiveBulkheadOptions extends QueueOptions {
  latencyThreshold: Duration;
  maxConcurrency: number;
  minConcurrency?: number;
  maxQueue?: number;
  backoffRatio?: number;
  increaseStep?: number;
  cooldown?: Duration;
  /** When set, the signal is this quantile of latency (through the LatencyDigestStore) instead of each sample. */
  latencyQuantile?: number;
  /** Samples per quantile epoch (default 512). */
  window?: number;
}
export interface ResolvedAdaptiveBulkheadOptions extends ResolvedQueueOptions {
  readonly latencyThreshold: number;
  readonly maxConcurrency: number;
  readonly minConcurrency: number;
  readonly backoffRatio: number;
  readonly increaseStep: number;
  readonly cooldown: number;
  readonly latencyQuantile: number | undefined;
  readonly window: number;
}

export interface GradientBulkheadOptions extends QueueOptions {
  maxConcurrency: number;
  minConcurrency?: number;
  initialLimit?: number;
  maxQueue?: number;
  rttTolerance?: number;
  smoothing?: number;
  longWindow?: number;
  headroom?: number;
  /**
   * Sample window (Netflix concurrency-limits `WindowedLimit`): Gradient2 gets one sample per window — the
   * average RTT of its successful calls and the most in flight — and only from a window of at least `windowSize`
   * calls (default 10). A window closes at the first completion after `clamp(2 × its min RTT, minWindowTime,
   * maxWindowTime)` (defaults 1 s / 1 s) from the previous close.
   */
  windowSize?: number;
  minWindowTime?: Duration;
  maxWindowTime?: Duration;
}
export interface ResolvedGradientBulkheadOptions extends ResolvedQueueOptions {
  readonly maxConcurrency: number;
  readonly minConcurrency: number;
  readonly initialLimit: number;
  readonly rttTolerance: number;
  readonly smoothing: number;
  readonly longWindow: number;
  readonly headroom: number;
  readonly windowSize: number;
  readonly minWindowTime: number;
  readonly maxWindowTime: number;
}

// --- breaker and throttle -------------------------------------------------------------------------------------------
export interface CircuitBreakerOptions {
  failureRatio: number;
  samplingWindow: Duration;
  minThroughput: number;
  breakDuration: Duration;
  halfOpenMaxCalls?: number;
  /**
   * When set (≥ breakDuration), breaks grow: each re-open after a failed half-open period lasts the previous break ×
   * `breakDurationMultiplier`, capped here (1 s, 2 s, 4 s, …); a close resets it to `breakDuration`.
   */
  maxBreakDuration?: Duration | undefined;
  /** ≥ 1, default 2; only with `maxBreakDuration`. */
  breakDurationMultiplier?: number;
}
export interface ResolvedCircuitBreakerOptions {
  readonly failureRatio: number;
  readonly samplingWindow: number;
  readonly minThroughput: number;
  readonly breakDuration: number;
  readonly halfOpenMaxCalls: number;
  readonly maxBreakDuration: number | undefined;
  readonly breakDurationMultiplier: number;
}

export interface AdaptiveThrottleOptions {
  k?: number;
  window?: Duration;
  minThroughput?: number;
}
export interface ResolvedAdaptiveThrottleOptions {
  readonly k: number;
  readonly window: number;
  readonly minThroughput: number;
}

// --- retry ----------------------------------------------------------------------------------------------------------
export interface BackoffOptions {
  base: Duration;
  /**
   * The longest sleep between attempts: caps the computed backoff, and a `retryAfter` hint beyond it ends the
   * retries with the real error instead of sleeping.
   */
  max: Duration;
  multiplier?: number;
  jitter?: JitterMode;
}
export interface ResolvedBackoffOptions {
  readonly base: number;
  readonly max: number;
  readonly multiplier: number;
  readonly jitter: JitterMode;
}

export interface RetryBudgetOptions {
  /** Tokens earned per call, in (0, 1]. */
  ratio: number;
  minThroughput?: number;
}
export interface ResolvedRetryBudgetOptions {
  readonly ratio: number;
  readonly minThroughput: number;
}

export interface TimeoutOptions {
  /** Per attempt. */
  timeout: Duration;
}
export interface ResolvedTimeoutOptions {
  readonly timeout: number;
}

// --- hedge and fallback ---------------------------------------------------------------------------------------------
export interface HedgeOptions {
  delay: Duration;
  maxAttempts: number;
  adaptiveDelayQuantile?: number;
  delayMin?: Duration;
  delayMax?: Duration;
}
export interface ResolvedHedgeOptions {
  readonly delay: number;
  readonly maxAttempts: number;
  readonly adaptiveDelayQuantile: number | undefined;
  readonly delayMin: number | undefined;
  readonly delayMax: number | undefined;
}

/** Kinds a retry may be configured to retry on (the retryable kinds, SPEC §5). */
export type RetryableKind = Extract<ExceptionKind, 'concurrency' | 'infrastructure' | 'throttled'>;
