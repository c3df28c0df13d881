export { AdaptiveThrottle, DEFAULT_ADAPTIVE_THROTTLE_OPTIONS } from './adaptive-throttle';
export { THROTTLE_BUCKETS } from './rolling-counts';
export type { AdaptiveThrottleOptions, ResolvedAdaptiveThrottleOptions } from './adaptive-throttle';
