// Ballast as the harness drives it: the packages' TypeScript sources, transpiled on load by the loader the
// process-level tests use (tools/jest/ts-source-loader.cjs), so `npm test` runs the quick slice with no build first
// and the soak exercises exactly the code the Jest suites test. Internal modules (the bulkhead runtime the probes
// spy on) come from the same module cache as the public entry points, so a spy on a prototype sees every call.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const require = createRequire(import.meta.url);
require('../../../jest/ts-source-loader.cjs');

export const core = require('@ballast/core');
export const testing = require('@ballast/testing');

/** A module of a package's sources by its path under packages/ (`core/src/bulkhead/bulkhead-runtime`). */
export function source(relative) {
  return require(path.join(ROOT, 'packages', `${relative}.ts`));
}
