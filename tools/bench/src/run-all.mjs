// `npm run bench`: every benchmark suite in sequence, each writing its own section of BENCHMARKS.md.
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
];
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
}
