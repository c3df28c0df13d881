// Lets a child process of a test run the project's TypeScript sources with no build, so it works in a clean CI
// clone: `.ts` files are transpiled on load with the TypeScript compiler's transpileModule (syntax only, like
// ts-jest's isolatedModules), and `@ballast/*` resolves to packages/*/src as in the Jest config. Used by the child
// processes of process-level tests (packages/redis/test/fleet-child.cjs, apps/demo/test/main-child.cjs):
// `require('<root>/tools/jest/ts-source-loader.cjs')` first, then require `.ts` files.
'use strict';
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const Module = require('node:module');
const ts = require('typescript');

const root = path.resolve(__dirname, '..', '..');
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  const m = /^@ballast\/([a-z0-9-]+)$/.exec(request);
  return resolve.call(this, m ? path.join(root, 'packages', m[1], 'src', 'index.ts') : request, ...rest);
};
const compilerOptions = {
  module: ts.ModuleKind.CommonJS,
  target: ts.ScriptTarget.ES2022,
  esModuleInterop: true,
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
  isolatedModules: true,
};
// Transpiled output is cached on disk by content hash: the first child pays for transpiling, the others reuse it.
const cacheDir = path.join(os.tmpdir(), 'ballast-ts-source-cache');
fs.mkdirSync(cacheDir, { recursive: true });
require.extensions['.ts'] = (module, filename) => {
  const source = fs.readFileSync(filename, 'utf8');
  const hash = crypto.createHash('sha1').update(ts.version).update(filename).update(source).digest('hex');
  const cached = path.join(cacheDir, `${hash}.js`);
  let output;
  try {
    output = fs.readFileSync(cached, 'utf8');
  } catch {
    output = ts.transpileModule(source, { compilerOptions, fileName: filename }).outputText;
    const temporary = `${cached}.${process.pid}.tmp`;
    fs.writeFileSync(temporary, output);
    fs.renameSync(temporary, cached); // atomic: a concurrent child never reads half a file
  }
  module._compile(output, filename);
};

module.exports = { root };
