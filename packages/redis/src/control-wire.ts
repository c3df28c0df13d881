/**
 * What crosses the control channel and the control keys is read defensively: anyone with access to the Redis can
 * publish on the channel or write the keys, and a message Ballast did not write must never be applied.
 */

/** A notice is the new seq as decimal digits, nothing else; anything else is ignored (and logged once). */
export function parseNotice(message: string): number | undefined {
  if (typeof message !== 'string' || !/^\d{1,15}$/.test(message)) return undefined;
  return Number(message);
}

/** JSON, or undefined when it does not parse (a value written by someone else). */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text, (key, value: unknown) => (key === '__proto__' ? undefined : value));
  } catch {
    return undefined;
  }
}

const warned = new Set<string>();

/** A warning per distinct message: a hostile publisher in a loop must not flood the log. */
export function warnOnce(message: string): void {
  if (warned.has(message) || warned.size > 100) return;
  warned.add(message);
  process.emitWarning(message, 'BallastControlWarning');
}
