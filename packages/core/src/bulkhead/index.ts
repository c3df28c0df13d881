export { isParked } from './admission';
export type { Admission, ParkedAdmission, BulkheadOutcome, BulkheadHooks } from './admission';
export { createBulkheadRuntime } from './bulkhead-runtime';
export type {
  BulkheadRuntime,
  BulkheadRuntimeDeps,
  BulkheadStrategyConfig,
  RunningCalls,
} from './bulkhead-runtime';
