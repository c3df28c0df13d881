export { AimdLimit, DEFAULT_AIMD_OPTIONS } from './aimd-limit';
export type { AimdLimitOptions, ResolvedAimdLimitOptions, AimdDecision } from './aimd-limit';
