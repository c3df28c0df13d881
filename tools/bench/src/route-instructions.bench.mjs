// Instructions per request of Nest's route function (route.probe.mjs) under valgrind's callgrind, with the pieces a
// request over HTTP adds to the bare loop (one event-loop turn per request, a fresh request object), one at a time:
// where the HTTP section's per-request cost differs from the route section's, by a measure the machine's load does
// not move (issue 24). Each (variant, adapter, mode, pieces) runs with N1 and N2 measured requests after the same
// warm-up; the difference of the totals over N2 − N1 is one more request, and the median of RI_REPEATS such pairs is
// printed (with every pair's figure). Prints JSON lines, writes no section.
//   node tools/bench/src/route-instructions.bench.mjs [variants] [adapters] [modes] [pieces sets, ';'-separated]
//   e.g. plain,resilient fastify noctx ';turn;fresh;turn,fresh'  (env BENCH_NODE, RI_N1, RI_N2, RI_WARM, RI_REPEATS)
import { execFile } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { referenceNode } from './lib/report.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const probe = path.join(here, 'route.probe.mjs');
const [variants = 'plain,resilient', adapters = 'fastify,express', modes = 'noctx', pieceSets = ';turn'] =
  process.argv.slice(2);
const N1 = Number(process.env.RI_N1 ?? 20_000);
const N2 = Number(process.env.RI_N2 ?? 40_000);
// As in instructions.bench.mjs: by default V8 compiles and collects on helper threads, so when optimised code is
// installed depends on thread scheduling, and one variant's count moved by up to 2× between runs. `--predictable`
// runs that work on the main thread at the same points each time; with fixed seeds, the same run takes the same path.
// What still moves (± a few %, for a policy with a breaker) is what follows the real clock, ~50× slower here.
const V8_FLAGS = ['--predictable', '--hash-seed=1', '--random-seed=1'];
const REPEATS = Number(process.env.RI_REPEATS ?? 3);
const node = process.env.BENCH_NODE ?? referenceNode();
const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
const run = promisify(execFile);

/** Total instructions callgrind counted for one probe process (its warm-up is min(20000, calls)). */
async function instructions(args, calls) {
  const { stderr } = await run(
    'valgrind',
    [
      '--tool=callgrind',
      '--callgrind-out-file=/dev/null',
      '--smc-check=all-non-file',
      node,
      ...V8_FLAGS,
      probe,
      ...args(calls),
    ],
    { maxBuffer: 1 << 26, env: { ...process.env, PROBE_WARM: process.env.RI_WARM ?? '20000' } },
  );
  const m = /Collected\s*:\s*(\d+)/.exec(stderr);
  if (m === null) throw new Error(`callgrind failed for ${args(calls)}:\n${stderr.slice(-2000)}`);
  return Number(m[1]);
}

const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];

for (const adapter of adapters.split(','))
  for (const mode of modes.split(','))
    for (const pieces of pieceSets.split(';'))
      for (const variant of variants.split(',')) {
        const args = (calls) => [variant, adapter, mode, String(calls), pieces];
        const runs = [];
        for (let i = 0; i < REPEATS; i++) {
          const [a, b] = await Promise.all([instructions(args, N1), instructions(args, N2)]);
          runs.push(Math.round((b - a) / (N2 - N1)));
        }
        const perRequest = median(runs);
        console.log(JSON.stringify({ node: version, variant, adapter, mode, pieces, perRequest, runs }));
      }
