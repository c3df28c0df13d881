import fc from 'fast-check';
import { violationsOf } from '../validation/options-validator';
import { FallbackStrategy } from '../strategies/fallback-strategy';
import { HedgeStrategy } from '../strategies/hedge-strategy';
import { RetryStrategy } from '../strategies/retry-strategy';
import { TRANSIENT_POLICY } from './builtin-policies';
import { policyFromSpec, policyToSpec } from './policy-spec';
import type { PolicySpec } from './policy-spec';
import { ResiliencePolicy } from './resilience-policy';

function errorOf(build: () => unknown): Error {
  try {
    build();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected policyFromSpec to throw');
}
const messagesOf = (json: unknown) =>
  violationsOf(errorOf(() => policyFromSpec(json)))?.map((v) => `${v.path} must be ${v.constraint}`);

const breakerSpec = {
  type: 'circuitBreaker',
  failureRatio: 0.5,
  samplingWindow: '10s',
  minThroughput: 5,
  breakDuration: '5s',
};

describe('policyFromSpec', () => {
  it('builds a policy with string durations and nested backoff/budget', () => {
    const p = policyFromSpec({
      name: 'orders',
      strategies: [
        { type: 'timeout', timeout: '2s' },
        {
          type: 'retry',
          maxAttempts: 3,
          backoff: { base: '50ms', max: '2s', jitter: 'full' },
          budget: { ratio: 0.1 },
        },
        breakerSpec,
        { type: 'rateLimit', permits: 100, per: '1s' },
      ],
      hedge: { delay: '20ms', maxAttempts: 2, budget: { ratio: 0.05, minThroughput: 100 } },
      failOpenOnStoreError: false,
    });
    expect(p).toBeInstanceOf(ResiliencePolicy);
    expect(p.strategies.map((s) => s.type)).toEqual(['rateLimit', 'circuitBreaker', 'retry', 'timeout']);
    expect(p.timeout?.options.timeout).toBe(2000);
    expect(p.retry?.options.backoff.options).toEqual({ base: 50, max: 2000, multiplier: 2, jitter: 'full' });
    expect(p.retry?.options.budget?.options).toEqual({ ratio: 0.1, minThroughput: 0 });
    expect(p.hedge?.options).toMatchObject({ delay: 20, maxAttempts: 2 });
    expect(p.hedge?.options.budget?.options).toEqual({ ratio: 0.05, minThroughput: 100 });
    expect(p.failOpenOnStoreError).toBe(false);
  });

  it('points at the JSON path', () => {
    const error = errorOf(() =>
      policyFromSpec({
        name: 'orders',
        strategies: [
          { type: 'retry', maxAttempts: 2 },
          { type: 'timeout', timeout: 10 },
          { ...breakerSpec, failureRatio: 1.5 },
        ],
      }),
    );
    expect(error).toMatchObject({ kind: 'configuration', code: 'invalid_policy', policy: 'orders' });
    expect(error.message).toBe(
      "Invalid policy spec 'orders': strategies[2].failureRatio must be in (0, 1], got 1.5",
    );
  });

  it('collects every violation across strategies, nested objects and the policy', () => {
    expect(
      messagesOf({
        name: '',
        strategies: [
          { type: 'rateLimit', permits: 0, per: '1x', bursts: 3 },
          { type: 'circuitBreaker', failureRatio: 0, samplingWindow: 1, minThroughput: 1, breakDuration: 1 },
          {
            type: 'retry',
            maxAttempts: 2,
            backoff: { base: '1s', max: '2s', jiter: 'full' },
            budget: { ratio: 0.1, min: 1 },
          },
          { type: 'retry', maxAttempts: 2 },
          { type: 'adaptiveThrottle' },
          { type: 'sleep' },
          42,
        ],
        hedge: { delay: 1, maxAttempts: 1, type: 'hedge', extra: true },
        fallback: 'cache',
        retries: 3,
      }),
    ).toEqual([
      'fallback must be absent: a fallback is code and cannot be expressed in JSON (attach a FallbackStrategy in code)',
      'retries must be a known policy field (name, strategies, hedge, failOpenOnStoreError, classifyResult, mode)',
      'strategies[0].bursts must be a known rateLimit option (permits, per, burst)',
      'strategies[0].permits must be ≥ 1',
      'strategies[0].per must be a duration > 0',
      'strategies[1].failureRatio must be in (0, 1]',
      'strategies[2].backoff.jiter must be a known backoff option (base, max, multiplier, jitter)',
      'strategies[2].budget.min must be a known budget option (ratio, minThroughput)',
      "strategies[5].type must be one of 'rateLimit', 'bulkhead', 'adaptiveBulkhead', 'gradientBulkhead', 'circuitBreaker', 'adaptiveThrottle', 'retry', 'timeout', 'chaos'",
      'strategies[6] must be a strategy object { type, ...options }',
      'hedge.extra must be a known hedge option (delay, maxAttempts, budget, adaptiveDelayQuantile, delayMin, delayMax)',
      'hedge.maxAttempts must be an integer ≥ 2',
      'name must be a non-blank string',
      'strategies[3] must be the only retry strategy (strategies[2] is one already)',
      'strategies[4] must be not combined with strategies[1]: circuitBreaker and adaptiveThrottle are mutually exclusive',
    ]);
  });

  it('rejects nulls, a wrong hedge type, non-object specs and non-array strategies', () => {
    expect(
      messagesOf({ name: 'p', strategies: [{ type: 'rateLimit', permits: 1, per: 1, burst: null }] }),
    ).toEqual([
      'strategies[0].burst must be a value, or absent (null is not accepted)',
      'strategies[0].burst must be ≥ 1',
    ]);
    expect(
      messagesOf({ name: 'p', strategies: [], hedge: { type: 'retry', delay: 1, maxAttempts: 2 } }),
    ).toEqual(["hedge.type must be 'hedge' or absent"]);
    expect(messagesOf({ name: 'p', strategies: [], hedge: 5 })).toEqual([
      'hedge must be a hedge object { delay, maxAttempts, ... }',
    ]);
    expect(messagesOf('policy')).toEqual([
      'options must be an object',
      'name must be a non-blank string',
      'strategies must be an array of strategies',
    ]);
    expect(messagesOf({ name: 'p', strategies: {} })).toEqual(['strategies must be an array of strategies']);
  });

  it('accepts a hedge spec with type "hedge" and a policy without strategies', () => {
    const p = policyFromSpec({
      name: 'h',
      strategies: [],
      hedge: { type: 'hedge', delay: 0, maxAttempts: 3 },
    });
    expect(p.hedge).toBeInstanceOf(HedgeStrategy);
    expect(p.strategies).toEqual([]);
  });
});

describe('policyToSpec', () => {
  it('writes resolved options in canonical order with nested backoff', () => {
    expect(policyToSpec(TRANSIENT_POLICY)).toEqual({
      name: 'transient',
      strategies: [
        {
          type: 'retry',
          maxAttempts: 3,
          backoff: { base: 100, max: 5000, multiplier: 2, jitter: 'decorrelated' },
          retryOn: ['infrastructure'],
        },
        { type: 'timeout', timeout: 30_000 },
      ],
      failOpenOnStoreError: true,
    });
  });

  it('omits options equal to the default derived from another, so an edited export stays consistent', () => {
    const p = policyFromSpec({
      name: 'd',
      strategies: [
        { type: 'rateLimit', permits: 100, per: '1s' },
        { type: 'gradientBulkhead', maxConcurrency: 50, minWindowTime: '2s' },
      ],
    });
    const spec = policyToSpec(p);
    expect(spec.strategies[0]).toEqual({ type: 'rateLimit', permits: 100, per: 1000 });
    expect(spec.strategies[1]).not.toHaveProperty('initialLimit');
    expect(spec.strategies[1]).not.toHaveProperty('maxWindowTime');
    expect(spec.strategies[1]).toMatchObject({ maxConcurrency: 50, minWindowTime: 2000 });
    // An operator lowers the limit in the exported JSON: accepted, and the derived options follow it.
    const edited = JSON.parse(JSON.stringify(spec)) as { strategies: Record<string, unknown>[] };
    edited.strategies[0]!['permits'] = 20;
    edited.strategies[1]!['maxConcurrency'] = 20;
    const retuned = policyFromSpec(edited);
    expect(retuned.rateLimit?.options).toMatchObject({ permits: 20, burst: 20 });
    expect(retuned.bulkhead?.options).toMatchObject({
      maxConcurrency: 20,
      initialLimit: 20,
      maxWindowTime: 2000,
    });
    // Explicit values that differ from the derived default are kept.
    const explicit = policyFromSpec({
      name: 'e',
      strategies: [
        { type: 'rateLimit', permits: 100, per: '1s', burst: 150 },
        { type: 'gradientBulkhead', maxConcurrency: 50, initialLimit: 10, maxWindowTime: '5s' },
      ],
    });
    expect(policyToSpec(explicit).strategies).toEqual([
      expect.objectContaining({ burst: 150 }),
      expect.objectContaining({ initialLimit: 10, maxWindowTime: 5000 }),
    ]);
  });

  it('omits queue options without a queue, undefined values, and the fallback', () => {
    const p = policyFromSpec({
      name: 'b',
      strategies: [{ type: 'adaptiveBulkhead', latencyThreshold: 100, maxConcurrency: 8 }],
    });
    const withFallback = new ResiliencePolicy({
      name: p.name,
      strategies: p.strategies,
      fallback: new FallbackStrategy({ fallback: () => null }),
    });
    const spec = policyToSpec(withFallback);
    expect(spec.strategies[0]).toEqual({
      type: 'adaptiveBulkhead',
      latencyThreshold: 100,
      maxConcurrency: 8,
      minConcurrency: 1,
      backoffRatio: 0.9,
      increaseStep: 1,
      cooldown: 1000,
      window: 512,
      maxQueue: 0,
    });
    expect('fallback' in spec).toBe(false);
    expect(policyFromSpec(spec).fallback).toBeUndefined();
  });
});

// --- round trip over generated valid specs ------------------------------------------------------------------------

const ms = (min: number, max: number) =>
  fc.oneof(
    fc.integer({ min, max }),
    fc.integer({ min, max }).map((n) => `${n}ms`),
    fc.integer({ min: Math.ceil(min / 1000), max: Math.floor(max / 1000) }).map((n) => `${n}s`),
  );
const count = (min: number, max: number) => fc.integer({ min, max });
const ratio = fc.integer({ min: 1, max: 100 }).map((n) => n / 100);
const openUnit = fc.integer({ min: 1, max: 99 }).map((n) => n / 100);
const budget = fc.record({ ratio, minThroughput: count(0, 1000) }, { requiredKeys: ['ratio'] });

const queue = fc.oneof(
  fc.record({ maxQueue: fc.constant(0) }, { requiredKeys: [] }),
  fc
    .tuple(
      count(1, 100),
      fc.integer({ min: 2, max: 1000 }),
      fc.boolean(),
      fc.boolean(),
      fc.boolean(),
      fc.boolean(),
    )
    .chain(([maxQueue, interval, withTarget, lifo, prio, withInterval]) =>
      fc.integer({ min: 0, max: (withInterval ? interval : 100) - 1 }).map((target) => ({
        maxQueue,
        ...(withInterval ? { queueInterval: interval } : {}),
        ...(withTarget ? { queueTarget: target } : {}),
        ...(lifo ? { queueAdaptiveLifo: true } : {}),
        ...(prio ? { prioritized: !lifo } : {}),
      })),
    ),
);

const bulkheadArb = fc.oneof(
  fc.tuple(count(1, 100), queue).map(([maxConcurrency, q]) => ({ type: 'bulkhead', maxConcurrency, ...q })),
  fc
    .tuple(
      fc.record(
        {
          latencyThreshold: ms(1, 10_000),
          backoffRatio: openUnit,
          increaseStep: fc.integer({ min: 1, max: 10 }),
          cooldown: ms(0, 10_000),
          latencyQuantile: openUnit,
          window: count(5, 2048),
        },
        { requiredKeys: ['latencyThreshold'] },
      ),
      count(1, 50),
      count(0, 50),
      queue,
    )
    .map(([o, min, extra, q]) => ({
      type: 'adaptiveBulkhead',
      ...o,
      minConcurrency: min,
      maxConcurrency: min + extra,
      ...q,
    })),
  fc
    .tuple(
      fc.record(
        {
          rttTolerance: fc.integer({ min: 10, max: 30 }).map((n) => n / 10),
          smoothing: ratio,
          longWindow: count(1, 1000),
          headroom: count(0, 10),
          windowSize: count(1, 50),
        },
        { requiredKeys: [] },
      ),
      count(1, 50),
      count(0, 50),
      queue,
      fc.option(fc.tuple(fc.integer({ min: 0, max: 2000 }), fc.integer({ min: 0, max: 2000 })), {
        nil: undefined,
      }),
    )
    .map(([o, min, extra, q, w]) => ({
      type: 'gradientBulkhead',
      ...o,
      minConcurrency: min,
      maxConcurrency: min + extra,
      initialLimit: min,
      ...q,
      // maxWindowTime must not be below minWindowTime.
      ...(w === undefined ? {} : { minWindowTime: w[0], maxWindowTime: w[0] + w[1] }),
    })),
);

const gateArb = fc.oneof(
  fc.record({
    type: fc.constant('circuitBreaker'),
    failureRatio: ratio,
    samplingWindow: ms(1, 60_000),
    minThroughput: count(1, 100),
    breakDuration: ms(1, 60_000),
    halfOpenMaxCalls: count(1, 5),
  }),
  fc.record(
    {
      type: fc.constant('adaptiveThrottle'),
      k: fc.integer({ min: 10, max: 30 }).map((n) => n / 10),
      window: ms(1, 600_000),
      minThroughput: count(0, 100),
    },
    { requiredKeys: ['type'] },
  ),
);

const retryArb = fc.record(
  {
    type: fc.constant('retry'),
    maxAttempts: count(1, 10),
    backoff: fc
      .tuple(
        fc.integer({ min: 1, max: 1000 }),
        fc.integer({ min: 0, max: 10_000 }),
        fc.constantFrom(1, 1.5, 2, 3),
        fc.constantFrom('none', 'full', 'equal', 'decorrelated'),
      )
      .map(([base, extra, multiplier, jitter]) => ({ base, max: base + extra, multiplier, jitter })),
    retryOn: fc.subarray(['concurrency', 'infrastructure', 'throttled'], { minLength: 1 }),
    budget,
  },
  { requiredKeys: ['type', 'maxAttempts'] },
);

const hedgeArb = fc.oneof(
  fc.record(
    { delay: ms(0, 5000), maxAttempts: count(2, 5), budget },
    { requiredKeys: ['delay', 'maxAttempts'] },
  ),
  fc
    .tuple(
      ms(0, 5000),
      count(2, 5),
      openUnit,
      fc.integer({ min: 0, max: 100 }),
      fc.integer({ min: 0, max: 1000 }),
    )
    .map(([delay, maxAttempts, q, lo, span]) => ({
      delay,
      maxAttempts,
      adaptiveDelayQuantile: q,
      delayMin: lo,
      delayMax: lo + span,
    })),
);

const specArb = fc
  .record(
    {
      name: fc.string({ minLength: 1, maxLength: 12 }).filter((s) => s.trim() !== ''),
      rateLimit: fc.record(
        {
          type: fc.constant('rateLimit'),
          permits: count(1, 1000),
          per: ms(1, 60_000),
          burst: count(1, 1000),
        },
        { requiredKeys: ['type', 'permits', 'per'] },
      ),
      bulkhead: bulkheadArb,
      gate: gateArb,
      retry: retryArb,
      timeout: fc.record({ type: fc.constant('timeout'), timeout: ms(1, 60_000) }),
      hedge: hedgeArb,
      failOpenOnStoreError: fc.boolean(),
    },
    { requiredKeys: ['name'] },
  )
  .chain(({ name, hedge, failOpenOnStoreError, ...slots }) =>
    fc
      .shuffledSubarray(Object.values(slots), { minLength: Object.values(slots).length })
      .map((strategies) => ({
        name,
        strategies,
        ...(hedge === undefined ? {} : { hedge }),
        ...(failOpenOnStoreError === undefined ? {} : { failOpenOnStoreError }),
      })),
  );

describe('round trip', () => {
  it('policyFromSpec(policyToSpec(p)) equals p, and the spec survives JSON', () => {
    fc.assert(
      fc.property(specArb, (spec) => {
        const p = policyFromSpec(spec);
        const written: PolicySpec = policyToSpec(p);
        const again = policyFromSpec(JSON.parse(JSON.stringify(written)));
        expect(again).toStrictEqual(p);
        expect(policyToSpec(again)).toStrictEqual(written);
      }),
      { numRuns: 300 },
    );
  });

  it('round-trips instances built in code', () => {
    const p = new ResiliencePolicy({
      name: 'code',
      strategies: [new RetryStrategy({ maxAttempts: 4, budget: { ratio: 0.2 } })],
      hedge: new HedgeStrategy({ delay: '15ms', maxAttempts: 2, adaptiveDelayQuantile: 0.9 }),
    });
    expect(policyFromSpec(policyToSpec(p))).toStrictEqual(p);
  });
});
