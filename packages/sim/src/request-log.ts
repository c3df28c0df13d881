/**
 * One row per logical request in struct-of-arrays form (typed arrays that double as they fill): a 60 s run at a
 * few thousand requests per second is a few hundred thousand rows, and flat arrays keep that to a few MB and
 * make windowed summaries a linear scan.
 */
export class RequestLog {
  #n = 0;
  arrival: Float64Array = new Float64Array(1024);
  /** Settlement time; NaN while in flight (and for requests still unfinished when the run stops). */
  end: Float64Array = new Float64Array(1024);
  /** When the first attempt started (left the client-side queues: bulkhead wait = admitted − arrival); NaN if never. */
  admitted: Float64Array = new Float64Array(1024);
  /** Attempts that reached the downstream (retries and hedges included). */
  attempts: Uint16Array = new Uint16Array(1024);
  /** Index into {@link RequestLog.labels}. */
  outcome: Uint8Array = new Uint8Array(1024);
  criticality: Uint8Array = new Uint8Array(1024);
  replica: Uint16Array = new Uint16Array(1024);
  /** Outcome labels: `success`, `unfinished`, `rejected:<code>`, `failed:<code>`, `cancelled:<code>`. */
  readonly labels: string[] = ['success', 'unfinished'];
  readonly #labelIndex = new Map<string, number>([
    ['success', 0],
    ['unfinished', 1],
  ]);

  static readonly SUCCESS = 0;
  static readonly UNFINISHED = 1;

  get length(): number {
    return this.#n;
  }

  /** Appends an in-flight request; returns its id. */
  add(arrival: number, replica: number, criticality: number): number {
    const i = this.#n++;
    if (i === this.arrival.length) this.#grow();
    this.arrival[i] = arrival;
    this.end[i] = NaN;
    this.admitted[i] = NaN;
    this.attempts[i] = 0;
    this.outcome[i] = RequestLog.UNFINISHED;
    this.replica[i] = replica;
    this.criticality[i] = criticality;
    return i;
  }

  /** Records how request `id` ended. */
  settle(id: number, end: number, label: number): void {
    this.end[id] = end;
    this.outcome[id] = label;
  }

  /** The index of an outcome label, registering it on first use (at most 255 distinct labels). */
  label(name: string): number {
    let i = this.#labelIndex.get(name);
    if (i === undefined) {
      i = this.labels.length;
      if (i > 255) throw new RangeError('RequestLog: more than 256 distinct outcome labels');
      this.labels.push(name);
      this.#labelIndex.set(name, i);
    }
    return i;
  }

  #grow(): void {
    const size = this.arrival.length * 2;
    const f = (a: Float64Array): Float64Array => {
      const b = new Float64Array(size);
      b.set(a);
      return b;
    };
    this.arrival = f(this.arrival);
    this.end = f(this.end);
    this.admitted = f(this.admitted);
    const o = new Uint8Array(size);
    o.set(this.outcome);
    this.outcome = o;
    const c = new Uint8Array(size);
    c.set(this.criticality);
    this.criticality = c;
    const r = new Uint16Array(size);
    r.set(this.replica);
    this.replica = r;
    const at = new Uint16Array(size);
    at.set(this.attempts);
    this.attempts = at;
  }
}
