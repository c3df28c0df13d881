export { P2Quantile } from './p2-quantile';
export type { P2QuantileJSON, P2QuantileOptions } from './p2-quantile';
export { WindowedP2Quantile, DEFAULT_P2_WINDOW } from './windowed-p2-quantile';
export type {
  WindowedP2QuantileOptions,
  ResolvedWindowedP2QuantileOptions,
  WindowedP2QuantileJSON,
} from './windowed-p2-quantile';
