import type { Distribution } from './distributions';
import type { RandomSource } from './seeded-random';
import { changeTimes, checkSchedule, valueAt, type Schedule } from './schedule';
import type { VirtualClock, VirtualTimer } from './virtual-clock';

/** The dependency every replica calls: `c` servers in front of one FIFO queue (an M/G/c station). */
export interface DownstreamOptions {
  /** Servers working in parallel (integer; may change over time: 0 is a hard outage). */
  readonly servers: Schedule;
  /** Service time of one request on an idle server. */
  readonly serviceTime: Distribution;
  /** Multiplies every service time drawn while it applies (a brown-out is a factor > 1). Default 1. */
  readonly latencyFactor?: Schedule;
  /** Probability that an attempt fails (HTTP 503). Default 0. */
  readonly errorRate?: Schedule;
  /**
   * When set, a failing attempt is refused after this many ms without queueing or taking a server (a dependency
   * that sheds at the door or refuses connections); otherwise it is served normally and fails at the end.
   */
  readonly errorLatency?: number;
  /** Queue capacity; a full queue refuses at once with 503. Default unbounded. */
  readonly maxQueue?: number;
}

/** What the downstream throws: carries an HTTP status, so core's `classify` maps it to `infrastructure`. */
export class DownstreamError extends Error {
  readonly status = 503;
  constructor(readonly reason: 'error' | 'queue_full') {
    super(reason === 'error' ? 'downstream failed (503)' : 'downstream queue full (503)');
    this.name = 'DownstreamError';
  }
}

/** Running totals; the simulator samples and differences them for per-interval rates. */
export interface DownstreamCounters {
  /** Every attempt that reached the downstream — the load it bears, retries and hedges included. */
  attempts: number;
  successes: number;
  failures: number;
  /** Refused because the queue was full. */
  refused: number;
  /** Left the queue or a server because the caller's signal aborted (attempt timeout, lost hedge…). */
  abandoned: number;
  /** Server-milliseconds spent, including work later abandoned (utilization = busyTime / (servers · time)). */
  busyTime: number;
}

interface Job {
  readonly resolve: () => void;
  readonly reject: (e: unknown) => void;
  readonly signal: AbortSignal | undefined;
  readonly fails: boolean;
  onAbort: (() => void) | undefined;
  /** 0 queued, 1 serving, 2 done. */
  state: 0 | 1 | 2;
  timer: VirtualTimer | undefined;
  startedAt: number;
}

/**
 * A shared dependency in virtual time. Work queues FIFO and each request holds a server for its service time;
 * by Little's law the queue (and so latency) grows without bound once arrivals exceed `servers / mean service
 * time` — the overload the controllers must prevent. Callers' signals are honoured: an aborted request leaves the
 * queue at once or frees its server, as a well-behaved RPC stack would.
 */
export class Downstream {
  readonly counters: DownstreamCounters = {
    attempts: 0,
    successes: 0,
    failures: 0,
    refused: 0,
    abandoned: 0,
    busyTime: 0,
  };
  readonly #o: DownstreamOptions;
  readonly #clock: VirtualClock;
  readonly #random: RandomSource;
  readonly #queue: (Job | undefined)[] = [];
  #head = 0;
  #queued = 0;
  #busy = 0;
  #maxQueued = 0;

  constructor(options: DownstreamOptions, clock: VirtualClock, random: RandomSource) {
    checkSchedule('servers', options.servers);
    if (options.latencyFactor !== undefined) checkSchedule('latencyFactor', options.latencyFactor);
    if (options.errorRate !== undefined) checkSchedule('errorRate', options.errorRate);
    if (options.errorLatency !== undefined && !(options.errorLatency >= 0)) {
      throw new RangeError(`errorLatency must be ≥ 0, got ${options.errorLatency}`);
    }
    if (options.maxQueue !== undefined && !(options.maxQueue >= 0)) {
      throw new RangeError(`maxQueue must be ≥ 0, got ${options.maxQueue}`);
    }
    this.#o = options;
    this.#clock = clock;
    this.#random = random;
    // Capacity may grow at these instants: start queued work then.
    for (const at of changeTimes(options.servers)) {
      if (at > clock.now()) clock.setTimeout(() => this.#dispatch(), at - clock.now());
    }
  }

  /** Requests waiting for a server. */
  get queued(): number {
    return this.#queued;
  }

  /** Servers busy now. */
  get busy(): number {
    return this.#busy;
  }

  /** The longest the queue has been. */
  get maxQueued(): number {
    return this.#maxQueued;
  }

  /** Servers available now. */
  servers(): number {
    return Math.floor(valueAt(this.#o.servers, this.#clock.now()));
  }

  /** Requests per second the downstream can serve now (Little's law: servers / mean service time). */
  capacity(): number {
    const factor =
      this.#o.latencyFactor === undefined ? 1 : valueAt(this.#o.latencyFactor, this.#clock.now());
    return (this.servers() * 1000) / (this.#o.serviceTime.mean * factor);
  }

  /** One request. Resolves on success; rejects with a {@link DownstreamError}, or the signal's reason on abort. */
  handle(signal?: AbortSignal): Promise<void> {
    const now = this.#clock.now();
    this.counters.attempts++;
    if (signal?.aborted) {
      this.counters.abandoned++;
      return Promise.reject(signal.reason);
    }
    const rate = this.#o.errorRate === undefined ? 0 : valueAt(this.#o.errorRate, now);
    const fails = rate > 0 && this.#random() < rate;
    return new Promise<void>((resolve, reject) => {
      const job: Job = {
        resolve,
        reject,
        signal,
        fails,
        onAbort: undefined,
        state: 0,
        timer: undefined,
        startedAt: now,
      };
      if (fails && this.#o.errorLatency !== undefined) {
        job.state = 1;
        job.timer = this.#clock.setTimeout(() => this.#finish(job, false), this.#o.errorLatency);
        this.#listen(job, false);
        return;
      }
      if (this.#queued >= (this.#o.maxQueue ?? Infinity) && this.#busy >= this.servers()) {
        this.counters.refused++;
        reject(new DownstreamError('queue_full'));
        return;
      }
      this.#queue.push(job);
      this.#queued++;
      if (this.#queued > this.#maxQueued) this.#maxQueued = this.#queued;
      this.#listen(job, true);
      this.#dispatch();
    });
  }

  #listen(job: Job, usesServer: boolean): void {
    const signal = job.signal;
    if (signal === undefined) return;
    job.onAbort = () => {
      if (job.state === 2) return;
      const wasServing = job.state === 1;
      job.state = 2;
      this.counters.abandoned++;
      if (job.timer !== undefined) this.#clock.clearTimeout(job.timer);
      if (!wasServing) this.#queued--;
      else if (usesServer) {
        this.#busy--;
        this.counters.busyTime += this.#clock.now() - job.startedAt;
      }
      job.reject(signal.reason);
      if (usesServer) this.#dispatch();
    };
    signal.addEventListener('abort', job.onAbort, { once: true });
  }

  /** Starts queued work while servers are free. Abandoned entries are skipped (lazy deletion). */
  #dispatch(): void {
    const q = this.#queue;
    const servers = this.servers();
    while (this.#busy < servers && this.#head < q.length) {
      const job = q[this.#head]!;
      q[this.#head++] = undefined;
      if (job.state !== 0) continue;
      this.#queued--;
      this.#busy++;
      job.state = 1;
      const now = this.#clock.now();
      job.startedAt = now;
      const factor = this.#o.latencyFactor === undefined ? 1 : valueAt(this.#o.latencyFactor, now);
      const ms = this.#o.serviceTime.sample(this.#random) * factor;
      job.timer = this.#clock.setTimeout(() => this.#finish(job, true), ms);
    }
    if (this.#head > 1024 && this.#head * 2 > q.length) {
      q.splice(0, this.#head);
      this.#head = 0;
    }
  }

  #finish(job: Job, usesServer: boolean): void {
    if (job.state === 2) return;
    job.state = 2;
    if (job.onAbort !== undefined) job.signal!.removeEventListener('abort', job.onAbort);
    if (usesServer) {
      this.#busy--;
      this.counters.busyTime += this.#clock.now() - job.startedAt;
    }
    if (job.fails) {
      this.counters.failures++;
      job.reject(new DownstreamError('error'));
    } else {
      this.counters.successes++;
      job.resolve();
    }
    if (usesServer) this.#dispatch();
  }
}
