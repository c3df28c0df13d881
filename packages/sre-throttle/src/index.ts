export { AdaptiveThrottle, DEFAULT_ADAPTIVE_THROTTLE_OPTIONS } from './adaptive-throttle';
export type { AdaptiveThrottleOptions, ResolvedAdaptiveThrottleOptions } from './adaptive-throttle';
