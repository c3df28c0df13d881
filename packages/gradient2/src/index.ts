export { Gradient2Limit, DEFAULT_GRADIENT2_OPTIONS } from './gradient2-limit';
export type {
  Gradient2LimitOptions,
  ResolvedGradient2LimitOptions,
  Gradient2Sample,
} from './gradient2-limit';
