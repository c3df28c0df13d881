// `npm run bench`: every benchmark suite in sequence, each writing its own section of BENCHMARKS.md. The suites in
// CROSS measure on Node 24, the reference runtime (SPEC §12.5), and then once more on the Node running this (the
// project's Node 20) with BENCH_NODE, which writes their cross-check sections.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const suites = [
  'algorithms.bench.mjs',
  'pipeline.bench.mjs',
  'instructions.bench.mjs',
  'sustained.bench.mjs',
  'redis-stores.bench.mjs',
  'redis-topologies.bench.mjs',
  'handler.bench.mjs',
  'http.bench.mjs',
  'http-instructions.bench.mjs',
];
const CROSS = new Set(['pipeline.bench.mjs', 'sustained.bench.mjs', 'handler.bench.mjs', 'http.bench.mjs']);
const crossNode = process.versions.node.split('.')[0] === '24' ? undefined : process.execPath;
const only = process.argv.slice(2);
for (const s of suites) {
  if (only.length > 0 && !only.some((o) => s.startsWith(o))) continue;
  const file = path.join(here, s);
  if (!fs.existsSync(file)) {
    console.log(`(skipping ${s}: not present)`);
    continue;
  }
  console.log(`\n=== ${s} ===`);
  execFileSync(process.execPath, [file], { stdio: 'inherit' });
  if (CROSS.has(s) && crossNode !== undefined) {
    console.log(`\n=== ${s} on Node ${process.versions.node} (cross-check) ===`);
    execFileSync(process.execPath, [file], {
      stdio: 'inherit',
      env: { ...process.env, BENCH_NODE: crossNode },
    });
  }
}
