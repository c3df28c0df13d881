// Instructions per request of Nest's route function (route.probe.mjs) under valgrind's callgrind, with the pieces a
// request over HTTP adds to the bare loop (one event-loop turn per request, a fresh request object), one at a time:
// where the HTTP section's per-request cost differs from the route section's, by a measure the machine's load does
// not move (issue 24). Each (variant, adapter, mode, pieces) runs with N1 and N2 measured requests after the same
// warm-up; the difference of the totals over N2 − N1 is one more request. Prints JSON lines, writes no section.
//   node tools/bench/src/route-instructions.bench.mjs [variants] [adapters] [modes] [pieces sets, ';'-separated]
//   e.g. plain,resilient fastify noctx ';turn;fresh;turn,fresh'       (env BENCH_NODE, RI_N1, RI_N2)
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
      // No compiler or GC helper threads: valgrind runs one thread at a time, and hands its lock over slowly.
      '--single-threaded',
      probe,
      ...args(calls),
    ],
    { maxBuffer: 1 << 26, env: { ...process.env, PROBE_WARM: process.env.RI_WARM ?? '20000' } },
  );
  const m = /Collected\s*:\s*(\d+)/.exec(stderr);
  if (m === null) throw new Error(`callgrind failed for ${args(calls)}:\n${stderr.slice(-2000)}`);
  return Number(m[1]);
}

for (const adapter of adapters.split(','))
  for (const mode of modes.split(','))
    for (const pieces of pieceSets.split(';'))
      for (const variant of variants.split(',')) {
        const args = (calls) => [variant, adapter, mode, String(calls), pieces];
        const [a, b] = await Promise.all([instructions(args, N1), instructions(args, N2)]);
        const perRequest = Math.round((b - a) / (N2 - N1));
        console.log(JSON.stringify({ node: version, variant, adapter, mode, pieces, perRequest }));
      }
