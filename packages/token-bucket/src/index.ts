export { TokenBucket } from './token-bucket';
export type { TokenBucketOptions, ResolvedTokenBucketOptions } from './token-bucket';
