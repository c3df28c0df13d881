export { Criticality, isCriticality } from './criticality';
export { CoDelQueue, CRITICALITY_ALLOWANCE_SCALE, DEFAULT_CODEL_INTERVAL } from './codel-queue';
export type {
  CoDelQueueOptions,
  ResolvedCoDelQueueOptions,
  CoDelPushResult,
  CoDelPopResult,
} from './codel-queue';
