/**
 * The circuit-breaker store the module hands to `Resilience` (the user's, or an in-memory one it creates), kept
 * so the stream gate can consult the very same breaker state. @internal
 */
export const RESILIENCE_BREAKER_STORE = Symbol('ballast:circuit-breaker-store');
