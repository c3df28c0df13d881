// @ballast/sim — a deterministic overload simulator driving the real @ballast/core executor in virtual time.

// The simulator
export { simulate } from './simulate';
export type {
  SimulationOptions,
  SimulationResult,
  Samples,
  ReplicaTrajectories,
  EventTallies,
} from './simulation-types';
export { summarize, timeSeries, sampleIndexAt } from './metrics';
export type { Summary, TimeSeries } from './metrics';
export { RequestLog } from './request-log';

// Models
export { Downstream, DownstreamError } from './downstream';
export type { DownstreamOptions, DownstreamCounters } from './downstream';
export { PoissonArrivals } from './load';
export type { LoadOptions, Arrival, CriticalityName } from './load';
export { constant, exponential, lognormal, withStragglers, standardNormal } from './distributions';
export type { Distribution } from './distributions';
export { steps, valueAt } from './schedule';
export type { Schedule, Step } from './schedule';

// Time and randomness
export { VirtualClock } from './virtual-clock';
export type { VirtualTimer, DrainMode } from './virtual-clock';
export { mulberry32, randomStream, streamSeed } from './seeded-random';
export type { RandomSource } from './seeded-random';

// Statistics and charts
export { jainIndex, percentiles, quantileSorted, settlingTime } from './stats';
export type { Percentiles, Trajectory } from './stats';
export { renderLineChart, renderBarChart, formatNumber } from './charts';
export type { LineChartSpec, LineSeries, BarChartSpec } from './charts';
export { writeDefaultCharts } from './default-charts';

// Scenarios and the report
export {
  SCENARIOS,
  FULL_SCALE,
  overloadScenario,
  capacityChangeScenario,
  fairnessScenario,
  hedgingScenario,
  throttleScenario,
  priorityScenario,
  retryStormScenario,
} from './scenarios';
export type { ScenarioOutcome, ScenarioScale, Check, Chart } from './scenarios';
export { runScenarios, renderReport, writeReport } from './report';
export type { TimedOutcome } from './report';
