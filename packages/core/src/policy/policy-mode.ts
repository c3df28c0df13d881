/** Whether a policy's decisions are enforced or only reported (SPEC §14.3). */
export type PolicyMode = 'enforce' | 'shadow';

/** The modes a policy accepts. */
export const POLICY_MODES: readonly PolicyMode[] = Object.freeze(['enforce', 'shadow']);
