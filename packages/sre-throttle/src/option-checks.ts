/**
 * Option validation shared by this package's constructors. Every violation is collected first so that one
 * `RangeError` reports all of them (SPEC §2), each naming the field, its constraint and the value given.
 * @internal
 */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === undefined || value === null)
    return String(value);
  return typeof value;
}

/** @internal */
export class OptionProblems {
  private readonly problems: string[] = [];

  constructor(private readonly owner: string) {}

  /** Records `field must be <constraint>, got <value>` unless `ok`. */
  check(ok: boolean, field: string, constraint: string, value: unknown): this {
    if (!ok) this.problems.push(`${field} must be ${constraint}, got ${describeValue(value)}`);
    return this;
  }

  throwIfAny(): void {
    if (this.problems.length > 0) throw new RangeError(`${this.owner}: ${this.problems.join('; ')}`);
  }
}

/** True for finite numbers strictly between 0 and 1, the domain of a quantile. @internal */
export const isOpenUnit = (x: unknown): x is number => typeof x === 'number' && x > 0 && x < 1;
