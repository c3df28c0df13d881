import { capacityChangeScenario } from './capacity-change';
import { fairnessScenario } from './fairness';
import { hedgingScenario } from './hedging';
import { overloadScenario } from './overload';
import { priorityScenario } from './priority-shedding';
import { retryStormScenario } from './retry-storm';
import type { ScenarioOutcome, ScenarioScale } from './scenario-types';
import { throttleScenario } from './throttle-vs-breaker';

export { capacityChangeScenario } from './capacity-change';
export { fairnessScenario } from './fairness';
export { hedgingScenario } from './hedging';
export { overloadScenario } from './overload';
export { priorityScenario } from './priority-shedding';
export { retryStormScenario } from './retry-storm';
export { throttleScenario } from './throttle-vs-breaker';
export { FULL_SCALE, REPORT_SEEDS, TEST_SCALE } from './scenario-types';
export type { Chart, Check, Measure, ScenarioOutcome, ScenarioScale } from './scenario-types';

/** The seven scenarios of issue 9, in document order. */
export const SCENARIOS: readonly ((scale: ScenarioScale) => Promise<ScenarioOutcome<unknown>>)[] = [
  overloadScenario,
  capacityChangeScenario,
  fairnessScenario,
  hedgingScenario,
  throttleScenario,
  priorityScenario,
  retryStormScenario,
];
