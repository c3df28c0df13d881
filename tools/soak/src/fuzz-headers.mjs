// Hostile header values through the parsers that read them, in process: the NestJS inbound path (the deadline budget
// and criticality headers: requestHeader → parseBudget / parseCriticality → the request scope they bind), gRPC's
// `grpc-timeout`, and `Retry-After` on errors (retryAfterOf). A header is never an error for the caller: every
// parser returns a value in its range or "absent", never throws, never hangs (each parse is timed), and a budget it
// accepts binds a deadline without throwing.
import { performance } from 'node:perf_hooks';
import { core, source, testing } from './lib/ballast.mjs';
import { prototypeProblems, prototypeSnapshot, rng } from './lib/fuzz-kit.mjs';

const { parseGrpcTimeout, retryAfterOf, remainingTime, currentCriticality } = core;
const { parseBudget, MALFORMED, inScope, DEFAULT_MAX_INBOUND_BUDGET } = source('nestjs/src/request-scope');
const { parseCriticality } = source('nestjs/src/criticality-level');
const { requestHeader } = source('nestjs/src/client-disconnect');

const PIECES = [
  '0',
  '1',
  '5',
  '9',
  '00',
  '250',
  '-',
  '+',
  '.',
  'e',
  'E',
  '1e3',
  ' ',
  '\t',
  '\u00a0',
  '\u2028',
  '\ufeff',
  '\u0000',
  '٣',
  '１',
  'Infinity',
  'NaN',
  '0x1f',
  '_',
  ',',
  ';',
  'ms',
  'S',
  'm',
  'H',
  'M',
  'u',
  'n',
  'critical',
  'CRITICAL',
  'best_effort',
  'Best-Effort',
  'degraded',
  'normal',
  '__proto__',
  'constructor',
  'toString',
  'Wed, 21 Oct 2015 07:28:00 GMT',
  'GMT',
  'Mon',
  '\ud83d\ude00',
  '\ud800',
  '"',
  "'",
  '\\',
  '%00',
  '\r\n',
];
const LONG = ['9', '0', ' ', '1.', '-', '9'.repeat(10) + '.'];

/** One hostile header value: pieces glued together, sometimes repeated to header-limit sizes (and past them). */
function headerValue(random) {
  const r = random();
  if (r < 0.08) {
    const unit = LONG[Math.floor(random() * LONG.length)];
    return unit.repeat(1 + Math.floor(random() * 100_000)) + (random() < 0.5 ? '' : 'x');
  }
  if (r < 0.4) {
    // near-valid numbers: sign, digits, fraction, padding, an exponent or a unit now and then
    const pick = (xs) => xs[Math.floor(random() * xs.length)];
    const digits = () => String(Math.floor(random() * 10 ** (1 + Math.floor(random() * 18))));
    return `${pick(['', '', ' ', '\t'])}${pick(['', '', '-', '+'])}${digits()}${pick(['', '', '.' + digits(), '.'])}${pick(['', '', '', 'e2', 'ms', ' '])}`;
  }
  if (r < 0.48) {
    let s = '';
    const n = Math.floor(random() * 24);
    for (let i = 0; i < n; i++) s += String.fromCharCode(Math.floor(random() * 0x10000));
    return s;
  }
  let s = '';
  const n = 1 + Math.floor(random() * 6);
  for (let i = 0; i < n; i++) s += PIECES[Math.floor(random() * PIECES.length)];
  return s;
}

/** A request as Node hands it over: header values are strings, a repeated header an array of strings. */
function request(random, name, value) {
  const headers = {};
  if (random() < 0.85) headers[name] = random() < 0.15 ? [value, headerValue(random)] : value;
  return { headers };
}

const inRange = (x, lo, hi) => typeof x === 'number' && !Number.isNaN(x) && x >= lo && x <= hi;

/** The problems of one value through every parser, and the slowest parse's time. */
function runCase(random, clock, throwing) {
  const problems = [];
  const value = headerValue(random);
  let slowest = 0;
  const timed = (label, f) => {
    const t0 = performance.now();
    try {
      return f();
    } catch (e) {
      problems.push(`${label} threw ${e?.constructor?.name}: ${String(e?.message).slice(0, 160)}`);
      return undefined;
    } finally {
      slowest = Math.max(slowest, performance.now() - t0);
    }
  };
  // --inject=header-throw: a value of the wrong type (a number), which parseBudget's `trim` cannot take
  if (throwing) timed('parseBudget', () => parseBudget(42));
  const max = random() < 0.5 ? DEFAULT_MAX_INBOUND_BUDGET : 1 + Math.floor(random() * 60_000);
  const budget = timed('parseBudget', () =>
    parseBudget(requestHeader(request(random, 'x-deadline-budget-ms', value), 'x-deadline-budget-ms'), max),
  );
  if (!(
    budget === undefined ||
    budget === MALFORMED ||
    (typeof budget === 'number' && !Number.isNaN(budget) && budget <= max)
  ))
    problems.push(`parseBudget gave ${String(budget)} (max ${max})`);
  const level = timed('parseCriticality', () =>
    parseCriticality(requestHeader(request(random, 'x-criticality', value), 'x-criticality')),
  );
  if (!(level === undefined || [0, 1, 2, 3].includes(level)))
    problems.push(`parseCriticality gave ${String(level)}`);
  if (typeof budget === 'number' && budget > 0) {
    // what the interceptor does with an accepted budget: bind it; the handler must see a deadline within it
    const seen = timed('inScope', () =>
      inScope(budget, level, clock, () => ({ left: remainingTime(), level: currentCriticality() })),
    );
    // float rounding: (now + budget) - now may exceed budget in the last bit
    if (seen !== undefined && !inRange(seen.left, 0, budget * (1 + 1e-12) + 1e-9))
      problems.push(`budget ${budget} bound a deadline of ${seen.left} ms`);
  }
  const grpc = timed('parseGrpcTimeout', () => parseGrpcTimeout(value));
  if (!(grpc === undefined || inRange(grpc, 0, 99_999_999 * 3_600_000)))
    problems.push(`parseGrpcTimeout gave ${grpc}`);
  const after = timed('retryAfterOf', () => retryAfterOf({ status: 429, headers: { 'retry-after': value } }));
  if (!(after === undefined || inRange(after, 0, Infinity))) problems.push(`retryAfterOf gave ${after}`);
  const fetched = timed('retryAfterOf(Headers)', () => {
    let headers;
    try {
      headers = new Headers({ 'retry-after': value });
    } catch {
      return undefined; // not a legal header value for fetch: it could not have arrived this way
    }
    return retryAfterOf({ response: { status: 503, headers } });
  });
  if (!(fetched === undefined || inRange(fetched, 0, Infinity)))
    problems.push(`retryAfterOf(Headers) gave ${fetched}`);
  return { problems, slowest, value, accepted: typeof budget === 'number' };
}

/** Runs `cases` hostile values from `seed`; a violation names the case's seed and index, which replay it. */
export async function fuzzHeaders({ seed, cases, until = Infinity, replayIndex, throwing = false }) {
  const protos = prototypeSnapshot();
  const clock = new testing.FakeClock(1_000);
  const tally = { cases: 0, budgetsAccepted: 0, slowestMs: 0, slowestCase: undefined, failures: [] };
  for (let i = replayIndex ?? 0; i < (replayIndex === undefined ? cases : replayIndex + 1); i++) {
    if (i % 1000 === 0 && Date.now() > until) break;
    const { problems, slowest, value, accepted } = runCase(rng(seed, i), clock, throwing && i === 5);
    tally.cases++;
    if (accepted) tally.budgetsAccepted++;
    if (slowest > tally.slowestMs) Object.assign(tally, { slowestMs: slowest, slowestCase: i });
    if (slowest > 1000) problems.push(`a parse took ${slowest.toFixed(0)} ms`);
    problems.push(...prototypeProblems(protos));
    if (problems.length > 0 && tally.failures.length < 5)
      tally.failures.push({
        index: i,
        input: JSON.stringify(value.slice(0, 200)),
        problems,
        replay: `npm run soak -- --only=headers --seed=${seed} --case=${i}`,
      });
  }
  return tally;
}
