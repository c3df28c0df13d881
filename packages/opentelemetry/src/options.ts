import { ResilienceError, formatValue, parseDuration, type Duration, type Violation } from '@ballast/core';
import { metrics, type Attributes, type Meter } from '@opentelemetry/api';

export interface InstrumentResilienceOptions {
  /** Where instruments are created. Default: `metrics.getMeter('@ballast/opentelemetry')` from the global provider. */
  readonly meter?: Meter | undefined;
  /**
   * Added to every data point (e.g. `{ 'service.name': 'orders' }` when no Resource carries it). Ballast's own keys
   * win on a clash. Keep these constant: they multiply every series.
   */
  readonly attributes?: Attributes | undefined;
  /**
   * Longest a collection waits for `admin.inspect()` before the gauges report from local state instead (ms, or a
   * string such as `'500ms'`, `'2s'`; default 1 s). Keep it below the reader's or scraper's own timeout.
   */
  readonly gaugeTimeout?: Duration | undefined;
}

/** Default `gaugeTimeout` (ms): far below a Prometheus scrape timeout (10 s) or an OTLP export timeout (30 s). */
export const DEFAULT_GAUGE_TIMEOUT = 1_000;

/** `setTimeout` fires at once (with a warning) above this many ms. */
const MAX_TIMER_MS = 2_147_483_647;

export interface ResolvedInstrumentOptions {
  readonly meter: Meter;
  readonly attributes: Attributes | undefined;
  readonly gaugeTimeout: number;
}

/**
 * Validates the options once (SPEC §2): every violation is collected and reported in one `configuration`
 * `ResilienceError` naming each field, its constraint and the given value; `details.violations` lists them.
 */
export function resolveInstrumentOptions(options: unknown, resilience: unknown): ResolvedInstrumentOptions {
  const violations: Violation[] = [];
  const fail = (path: string, constraint: string, value: unknown): void => {
    violations.push(Object.freeze({ path, constraint, value }));
  };
  // Checked before anything is created: a bad argument must not leave a gauge callback registered on the meter.
  if (!isResilience(resilience)) {
    fail('resilience', 'a Resilience (with on(listener) and admin.inspect())', resilience);
  }
  const o = isRecord(options) ? (options as InstrumentResilienceOptions) : {};
  if (!isRecord(options)) fail('options', 'an object', options);

  if (o.meter !== undefined && !isMeter(o.meter)) fail('meter', 'an OpenTelemetry Meter', o.meter);
  if (o.attributes !== undefined && !isRecord(o.attributes)) {
    fail('attributes', 'an object of attribute values', o.attributes);
  }
  let gaugeTimeout = DEFAULT_GAUGE_TIMEOUT;
  if (o.gaugeTimeout !== undefined) {
    const ms = durationOrUndefined(o.gaugeTimeout);
    if (ms === undefined || ms <= 0 || ms > MAX_TIMER_MS) {
      fail(
        'gaugeTimeout',
        `a duration > 0 and ≤ ${MAX_TIMER_MS} ms (a number of ms, or a string like '500ms', '2s')`,
        o.gaugeTimeout,
      );
    } else gaugeTimeout = ms;
  }

  if (violations.length > 0) {
    const parts = violations.map((v) => `${v.path} must be ${v.constraint}, got ${formatValue(v.value)}`);
    throw new ResilienceError({
      kind: 'configuration',
      message: `Invalid instrumentResilience options: ${parts.join('; ')}`,
      details: Object.freeze({ violations: Object.freeze(violations) }),
    });
  }
  return {
    meter: o.meter ?? metrics.getMeter('@ballast/opentelemetry'),
    attributes: o.attributes,
    gaugeTimeout,
  };
}

function durationOrUndefined(value: unknown): number | undefined {
  if (typeof value !== 'number' && typeof value !== 'string') return undefined;
  try {
    return parseDuration(value);
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isResilience(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const { on, admin } = value as { on?: unknown; admin?: unknown };
  return (
    typeof on === 'function' &&
    typeof admin === 'object' &&
    admin !== null &&
    typeof (admin as { inspect?: unknown }).inspect === 'function'
  );
}

function isMeter(value: unknown): value is Meter {
  if (!isRecord(value)) return false;
  return (
    typeof value['createCounter'] === 'function' &&
    typeof value['createHistogram'] === 'function' &&
    typeof value['createObservableGauge'] === 'function' &&
    typeof value['addBatchObservableCallback'] === 'function'
  );
}
