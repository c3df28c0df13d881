export { simulate } from './simulate';
export { summarize, timeSeries } from './metrics';
export { exponential, lognormal, constant, withStragglers } from './distributions';
