import fc from 'fast-check';
import { Gradient2Limit } from './gradient2-limit';

/**
 * A line-by-line transliteration of Netflix concurrency-limits `Gradient2Limit._update` and
 * `ExpAvgMeasurement` (Java), used as the oracle: the implementation must agree with it bit for bit.
 */
function netflixReference(o: {
  initialLimit: number;
  minLimit: number;
  maxLimit: number;
  smoothing: number;
  longWindow: number;
  tolerance: number;
  queueSize: number;
}) {
  let estimatedLimit = o.initialLimit;
  // ExpAvgMeasurement(longWindow, 10)
  let value = 0;
  let sum = 0;
  let count = 0;
  const add = (sample: number): number => {
    if (count < 10) {
      count++;
      sum += sample;
      value = sum / count;
    } else {
      const factor = 2.0 / (o.longWindow + 1);
      value = value * (1 - factor) + sample * factor;
    }
    return value;
  };
  return (rtt: number, inflight: number): number => {
    const queueSize = o.queueSize;
    const shortRtt = rtt;
    const longRtt = add(rtt);
    if (longRtt / shortRtt > 2) value = value * 0.95;
    if (inflight < estimatedLimit / 2) return Math.trunc(estimatedLimit);
    const gradient = Math.max(0.5, Math.min(1.0, (o.tolerance * longRtt) / shortRtt));
    let newLimit = estimatedLimit * gradient + queueSize;
    newLimit = estimatedLimit * (1 - o.smoothing) + newLimit * o.smoothing;
    newLimit = Math.max(o.minLimit, Math.min(o.maxLimit, newLimit));
    estimatedLimit = newLimit;
    return Math.trunc(estimatedLimit);
  };
}

/** Feeds `n` samples of `rtt` at full load (inflight = current limit) and returns the estimates after each. */
function drive(limit: Gradient2Limit, rtt: number, n: number): number[] {
  const trace: number[] = [];
  for (let i = 0; i < n; i++) {
    limit.onSample({ rtt, inflight: limit.limit });
    trace.push(limit.estimatedLimit);
  }
  return trace;
}

describe('Gradient2Limit — options', () => {
  it('resolves the SPEC defaults (initialLimit = maxConcurrency) and freezes them', () => {
    const g = new Gradient2Limit({ maxConcurrency: 50 });
    expect(g.options).toEqual({
      maxConcurrency: 50,
      minConcurrency: 1,
      initialLimit: 50,
      rttTolerance: 1.5,
      smoothing: 0.2,
      longWindow: 600,
      headroom: 4,
    });
    expect(Object.isFrozen(g.options)).toBe(true);
    expect(g.limit).toBe(50);
    expect(g.estimatedLimit).toBe(50);
    expect(g.longRttMs).toBe(0);
  });

  it('reports every violation in one RangeError', () => {
    expect(
      () =>
        new Gradient2Limit({
          maxConcurrency: 10,
          minConcurrency: 20,
          initialLimit: 30,
          rttTolerance: 0.5,
          smoothing: 0,
          longWindow: 0,
          headroom: -1,
        }),
    ).toThrow(
      'Gradient2Limit: minConcurrency must be a finite number in [1, maxConcurrency], got 20; ' +
        'initialLimit must be a finite number in [minConcurrency, maxConcurrency], got 30; ' +
        'rttTolerance must be a finite number ≥ 1, got 0.5; smoothing must be in (0, 1], got 0; ' +
        'longWindow must be an integer ≥ 1, got 0; headroom must be a finite number ≥ 0, got -1',
    );
    expect(() => new Gradient2Limit({ maxConcurrency: 0.5 })).toThrow(
      'Gradient2Limit: maxConcurrency must be a finite number ≥ 1, got 0.5',
    );
  });
});

describe('Gradient2Limit — the long RTT', () => {
  it('is the plain mean of the first ten samples, then an EMA with factor 2/(longWindow+1)', () => {
    const g = new Gradient2Limit({ maxConcurrency: 100, longWindow: 9 });
    const rtts = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100];
    rtts.forEach((rtt, i) => {
      g.onSample({ rtt, inflight: 100 });
      expect(g.longRttMs).toBeCloseTo((rtt * (i + 2)) / 2 / (i + 1) / 1, 10); // mean of 10…rtt
    });
    expect(g.longRttMs).toBe(55);
    g.onSample({ rtt: 105, inflight: 100 }); // factor 2/10 = 0.2
    expect(g.longRttMs).toBeCloseTo(55 * 0.8 + 105 * 0.2, 12);
  });

  it('decays the stored value by 0.95 when long/rtt > 2, affecting later samples only', () => {
    const g = new Gradient2Limit({ maxConcurrency: 100, initialLimit: 20 });
    drive(g, 100, 10);
    expect(g.longRttMs).toBe(100);
    const est = g.estimatedLimit;
    g.onSample({ rtt: 40, inflight: 100 });
    const long = 100 * (1 - 2 / 601) + 40 * (2 / 601);
    expect(g.longRttMs).toBeCloseTo(long * 0.95, 10);
    // This sample's gradient used the undecayed long RTT: 1.5 · 99.8 / 40 > 1 → gradient 1 → +0.8.
    expect(g.estimatedLimit).toBeCloseTo(est + 0.8, 12);
  });
});

describe('Gradient2Limit — regimes', () => {
  it('steady RTT: climbs by smoothing·headroom = +0.8 per sample up to the ceiling', () => {
    const g = new Gradient2Limit({ maxConcurrency: 30, initialLimit: 20 });
    const trace = drive(g, 10, 15);
    trace.slice(0, 12).forEach((est, i) => expect(est).toBeCloseTo(20 + 0.8 * (i + 1), 10));
    expect(trace[12]).toBe(30);
    expect(g.limit).toBe(30);
    expect(g.onSample({ rtt: 10, inflight: 30 })).toBe(30);
  });

  it('sustained 3× RTT rise: drives the estimate towards the fixed point headroom/(1 − gradient)', () => {
    const g = new Gradient2Limit({ maxConcurrency: 100, initialLimit: 100 });
    drive(g, 10, 100);
    expect(g.estimatedLimit).toBe(100);
    const trace = drive(g, 30, 60);
    // First sample: long = 10·599/601 + 30·2/601 ≈ 10.07, gradient = 1.5·long/30 ≈ 0.503 → ≈ est·0.9 + 0.8.
    const long = 10 * (1 - 2 / 601) + 30 * (2 / 601);
    expect(trace[0]).toBeCloseTo(100 * 0.8 + (100 * ((1.5 * long) / 30) + 4) * 0.2, 10);
    // It falls monotonically until it meets the fixed point, which itself creeps up as the long RTT catches up.
    for (let i = 1; i < 40; i++) expect(trace[i]!).toBeLessThan(trace[i - 1]!);
    // After 60 samples the estimate sits near the moving fixed point 4 / (1 − 1.5·long/30).
    const gradient = (1.5 * g.longRttMs) / 30;
    // From 82 above it at the first sample to within 1 of it (it trails slightly as the fixed point rises).
    expect(Math.abs(g.estimatedLimit - 4 / (1 - gradient))).toBeLessThan(1);
    expect(g.limit).toBeLessThan(15);
  });

  it('recovery: once RTT returns to normal the drift decay pulls the long RTT down and the limit climbs back', () => {
    const g = new Gradient2Limit({ maxConcurrency: 100, initialLimit: 100 });
    drive(g, 10, 100);
    drive(g, 100, 200); // prolonged 10× load: the long RTT has moved about half-way to 100
    expect(g.longRttMs).toBeGreaterThan(40);
    const low = g.estimatedLimit;
    expect(low).toBeLessThan(30);
    const trace = drive(g, 10, 150);
    // The long RTT falls by at least 5 % per sample while it is over twice the RTT, then the EMA takes over.
    expect(g.longRttMs).toBeLessThan(20);
    for (let i = 0; i < 10; i++) expect(trace[i]).toBeCloseTo(low + 0.8 * (i + 1), 8);
    expect(g.estimatedLimit).toBe(100);
  });

  it('app-limited samples (inflight < estimate/2) leave the estimate unchanged but still feed the long RTT', () => {
    const g = new Gradient2Limit({ maxConcurrency: 100, initialLimit: 40 });
    for (let i = 0; i < 20; i++) expect(g.onSample({ rtt: 500, inflight: 19 })).toBe(40);
    expect(g.estimatedLimit).toBe(40);
    expect(g.longRttMs).toBe(500);
    g.onSample({ rtt: 500, inflight: 20 }); // exactly half is not app-limited
    expect(g.estimatedLimit).toBeCloseTo(40.8, 12);
  });

  it('ignores samples with rtt ≤ 0 or a non-finite rtt (SPEC §11.6)', () => {
    const g = new Gradient2Limit({ maxConcurrency: 100, initialLimit: 33.7 });
    for (const rtt of [0, -5, Number.NaN, Infinity]) expect(g.onSample({ rtt, inflight: 100 })).toBe(33);
    expect(g.estimatedLimit).toBe(33.7);
    expect(g.longRttMs).toBe(0);
  });

  it('clamps at the floor', () => {
    const g = new Gradient2Limit({ maxConcurrency: 100, minConcurrency: 20, initialLimit: 25, headroom: 0 });
    drive(g, 10, 20);
    drive(g, 1000, 50);
    expect(g.estimatedLimit).toBe(20);
  });
});

describe('Gradient2Limit — properties', () => {
  const config = fc.record({
    max: fc.integer({ min: 1, max: 1000 }),
    minFraction: fc.double({ min: 0, max: 1, noNaN: true }),
    initialFraction: fc.double({ min: 0, max: 1, noNaN: true }),
    rttTolerance: fc.double({ min: 1, max: 5, noNaN: true }),
    smoothing: fc.double({ min: 0.01, max: 1, noNaN: true }),
    longWindow: fc.integer({ min: 1, max: 1000 }),
    headroom: fc.double({ min: 0, max: 20, noNaN: true }),
  });
  const samples = fc.array(
    fc.record({
      rtt: fc.oneof(fc.double({ min: 1e-3, max: 1e5, noNaN: true }), fc.constantFrom(0, -1, 10, 30)),
      inflight: fc.integer({ min: 0, max: 1200 }),
    }),
    { maxLength: 200 },
  );
  const build = (c: {
    max: number;
    minFraction: number;
    initialFraction: number;
    rttTolerance: number;
    smoothing: number;
    longWindow: number;
    headroom: number;
  }) => {
    const min = Math.max(1, Math.floor(c.max * c.minFraction));
    const initial = min + (c.max - min) * c.initialFraction;
    return {
      min,
      initial,
      limit: new Gradient2Limit({
        maxConcurrency: c.max,
        minConcurrency: min,
        initialLimit: initial,
        rttTolerance: c.rttTolerance,
        smoothing: c.smoothing,
        longWindow: c.longWindow,
        headroom: c.headroom,
      }),
    };
  };

  it('agrees bit for bit with a transliteration of Netflix Gradient2Limit.java', () => {
    fc.assert(
      fc.property(config, samples, (c, xs) => {
        const { min, initial, limit } = build(c);
        const reference = netflixReference({
          initialLimit: initial,
          minLimit: min,
          maxLimit: c.max,
          smoothing: c.smoothing,
          longWindow: c.longWindow,
          tolerance: c.rttTolerance,
          queueSize: c.headroom,
        });
        for (const { rtt, inflight } of xs) {
          const actual = limit.onSample({ rtt, inflight });
          if (rtt > 0) expect(actual).toBe(reference(rtt, inflight));
        }
      }),
    );
  });

  it('keeps the limit an integer within [min, max], equal to trunc(estimatedLimit), never NaN', () => {
    fc.assert(
      fc.property(
        config,
        fc.array(
          fc.record({
            rtt: fc.double({ noNaN: true, noDefaultInfinity: true }),
            inflight: fc.double({ noNaN: true, noDefaultInfinity: true }),
          }),
          { maxLength: 100 },
        ),
        (c, xs) => {
          const { min, limit } = build(c);
          for (const sample of xs) {
            const result = limit.onSample(sample);
            expect(Number.isInteger(result)).toBe(true);
            expect(result).toBe(Math.trunc(limit.estimatedLimit));
            expect(limit.estimatedLimit).toBeGreaterThanOrEqual(min);
            expect(limit.estimatedLimit).toBeLessThanOrEqual(c.max);
            expect(Number.isFinite(limit.longRttMs) || limit.longRttMs === Infinity).toBe(true);
          }
        },
      ),
    );
  });
});
