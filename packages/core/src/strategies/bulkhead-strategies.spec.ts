import { violationsOf } from '../validation/options-validator';
import { AdaptiveBulkheadStrategy } from './adaptive-bulkhead-strategy';
import { BulkheadStrategy } from './bulkhead-strategy';
import { GradientBulkheadStrategy } from './gradient-bulkhead-strategy';

function violations(build: () => unknown) {
  try {
    build();
  } catch (error) {
    return violationsOf(error);
  }
  throw new Error('expected the constructor to throw');
}
const QUEUE_DEFAULTS = {
  maxQueue: 0,
  queueTarget: undefined,
  queueInterval: 100,
  queueAdaptiveLifo: false,
  prioritized: false,
};

describe('BulkheadStrategy', () => {
  it('resolves with queue defaults', () => {
    const s = new BulkheadStrategy({ maxConcurrency: 4 });
    expect(s.type).toBe('bulkhead');
    expect(s.options).toEqual({ maxConcurrency: 4, ...QUEUE_DEFAULTS });
    expect(Object.isFrozen(s) && Object.isFrozen(s.options)).toBe(true);
  });

  it('resolves queue options', () => {
    const s = new BulkheadStrategy({
      maxConcurrency: 4,
      maxQueue: 10,
      queueTarget: '5ms',
      queueInterval: '50ms',
      queueAdaptiveLifo: true,
      prioritized: true,
    });
    expect(s.options).toEqual({
      maxConcurrency: 4,
      maxQueue: 10,
      queueTarget: 5,
      queueInterval: 50,
      queueAdaptiveLifo: true,
      prioritized: true,
    });
  });

  it('needs maxQueue ≥ 1 for any queue option', () => {
    expect(
      violations(
        () =>
          new BulkheadStrategy({
            maxConcurrency: 1,
            queueTarget: 5,
            queueAdaptiveLifo: true,
            prioritized: true,
          }),
      ),
    ).toEqual([
      { path: 'queueTarget', constraint: 'set only with maxQueue ≥ 1', value: 5 },
      { path: 'queueAdaptiveLifo', constraint: 'set only with maxQueue ≥ 1', value: true },
      { path: 'prioritized', constraint: 'set only with maxQueue ≥ 1', value: true },
    ]);
  });

  it('needs queueTarget < queueInterval', () => {
    expect(
      violations(() => new BulkheadStrategy({ maxConcurrency: 1, maxQueue: 1, queueTarget: '100ms' })),
    ).toEqual([{ path: 'queueTarget', constraint: '< queueInterval (100 ms)', value: '100ms' }]);
  });

  it('rejects bad counts and types', () => {
    expect(
      violations(
        () =>
          new BulkheadStrategy({
            maxConcurrency: 0,
            maxQueue: -1,
            queueInterval: 0,
            prioritized: 'yes' as never,
          }),
      )?.map((v) => v.path),
    ).toEqual(['maxConcurrency', 'maxQueue', 'queueInterval', 'prioritized']);
  });
});

describe('AdaptiveBulkheadStrategy', () => {
  it('applies the SPEC defaults', () => {
    const s = new AdaptiveBulkheadStrategy({ latencyThreshold: '200ms', maxConcurrency: 50 });
    expect(s.type).toBe('adaptiveBulkhead');
    expect(s.options).toEqual({
      latencyThreshold: 200,
      maxConcurrency: 50,
      minConcurrency: 1,
      backoffRatio: 0.9,
      increaseStep: 1,
      cooldown: 1000,
      latencyQuantile: undefined,
      window: 512,
      ...QUEUE_DEFAULTS,
    });
  });

  it('reports every violation', () => {
    expect(
      violations(
        () =>
          new AdaptiveBulkheadStrategy({
            latencyThreshold: 0,
            maxConcurrency: 5,
            minConcurrency: 6,
            backoffRatio: 1,
            increaseStep: 0,
            cooldown: '-1s',
            latencyQuantile: 0,
            window: 4,
          }),
      )?.map((v) => `${v.path} ${v.constraint}`),
    ).toEqual([
      'minConcurrency ≤ maxConcurrency (5)',
      'latencyThreshold a duration > 0',
      'backoffRatio in (0, 1)',
      'increaseStep > 0',
      'cooldown a duration ≥ 0',
      'latencyQuantile in (0, 1)',
      'window an integer ≥ 5',
    ]);
  });
});

describe('GradientBulkheadStrategy', () => {
  it('applies the Netflix defaults with initialLimit = maxConcurrency', () => {
    const s = new GradientBulkheadStrategy({ maxConcurrency: 20 });
    expect(s.type).toBe('gradientBulkhead');
    expect(s.options).toEqual({
      maxConcurrency: 20,
      minConcurrency: 1,
      initialLimit: 20,
      rttTolerance: 1.5,
      smoothing: 0.2,
      longWindow: 600,
      headroom: 4,
      windowSize: 10,
      minWindowTime: 1000,
      maxWindowTime: 1000,
      ...QUEUE_DEFAULTS,
    });
  });

  it('resolves the sample window: durations as strings, maxWindowTime defaults to max(1 s, minWindowTime)', () => {
    const s = new GradientBulkheadStrategy({ maxConcurrency: 20, windowSize: 25, minWindowTime: '2s' });
    expect(s.options).toMatchObject({ windowSize: 25, minWindowTime: 2000, maxWindowTime: 2000 });
    const t = new GradientBulkheadStrategy({
      maxConcurrency: 20,
      minWindowTime: '250ms',
      maxWindowTime: '3s',
    });
    expect(t.options).toMatchObject({ windowSize: 10, minWindowTime: 250, maxWindowTime: 3000 });
    expect(
      violations(
        () =>
          new GradientBulkheadStrategy({
            maxConcurrency: 20,
            windowSize: 0,
            minWindowTime: 500,
            maxWindowTime: 100,
          }),
      ),
    ).toEqual([
      { path: 'windowSize', constraint: expect.any(String) as unknown, value: 0 },
      { path: 'maxWindowTime', constraint: '≥ minWindowTime (500 ms)', value: 100 },
    ]);
  });

  it('reports every violation', () => {
    expect(
      violations(
        () =>
          new GradientBulkheadStrategy({
            maxConcurrency: 10,
            minConcurrency: 2,
            initialLimit: 11,
            rttTolerance: 0.9,
            smoothing: 0,
            longWindow: 0,
            headroom: -1,
          }),
      )?.map((v) => v.path),
    ).toEqual(['initialLimit', 'rttTolerance', 'smoothing', 'longWindow', 'headroom']);
    expect(
      violations(
        () => new GradientBulkheadStrategy({ maxConcurrency: 10, minConcurrency: 5, initialLimit: 4 }),
      ),
    ).toEqual([
      { path: 'initialLimit', constraint: 'in [minConcurrency, maxConcurrency] = [5, 10]', value: 4 },
    ]);
  });
});
