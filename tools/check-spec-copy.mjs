#!/usr/bin/env node
// docs/SPEC.md is the repository's copy of the product contract, which source comments cite as `SPEC §n`. The
// contract owner keeps the original beside the repository (../shared/SPEC.md on the project's machines and in CI):
// when both are there and differ, say so, so the copy is brought up to date in the same change that follows the new
// contract. A warning, not a failure: a contract change must not stop an unrelated build. Run by `npm run lint`.
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const copy = path.join(root, 'docs', 'SPEC.md');
const original = path.join(root, '..', 'shared', 'SPEC.md');
if (!fs.existsSync(copy)) {
  console.error('check-spec-copy: docs/SPEC.md is missing (source comments cite it)');
  process.exit(1);
}
if (fs.existsSync(original) && fs.readFileSync(original, 'utf8') !== fs.readFileSync(copy, 'utf8'))
  console.warn(
    `check-spec-copy: WARNING docs/SPEC.md differs from ${original}: copy the contract in (cp ${original} docs/SPEC.md)`,
  );
else console.log('check-spec-copy: docs/SPEC.md is the current contract');
