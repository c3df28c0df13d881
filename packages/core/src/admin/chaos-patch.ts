/** A JSON-able change of a policy's chaos settings (the body of `admin.setChaos`). */
export interface ChaosPatch {
  enabled?: boolean;
  /** `null` removes the fault injection. */
  fault?: { rate: number; message?: string } | null;
  /** `null` removes the latency injection. `delay` in ms (or a duration string such as `'200ms'`). */
  latency?: { rate: number; delay: number | string } | null;
  /** `null` removes the outcome injection. */
  outcome?: { rate: number; value?: unknown } | null;
}
