// Runs the demo's entry point (src/main.ts) from its TypeScript sources, as `npm start` runs the build: for the
// process-level tests (src/main.process.spec.ts) — signals, exit codes, start-up messages — with no build needed.
// (tools/jest/ts-source-loader.cjs transpiles `.ts` files on load and resolves `@ballast/*` to packages/*/src).
'use strict';
const path = require('node:path');
require(path.join(__dirname, '..', '..', '..', 'tools', 'jest', 'ts-source-loader.cjs'));

require(path.join(__dirname, '..', 'src', 'main.ts'));
