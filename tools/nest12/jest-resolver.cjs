// Jest resolver for the NestJS 12 side of the test matrix (tools/test-nest12.sh).
// The workspace's own Nest stack is 11; tools/nest12 holds the Nest 12 stack as a workspace of its own, so npm
// nests the versions that differ under tools/nest12/node_modules (or hoists a Nest 12 package to the root and
// nests the Nest 11 one under packages/nestjs). A bare import of a package this matrix declares, from anywhere —
// a spec, @ballast/nestjs's sources, another package — resolves as tools/nest12 itself would resolve it, so every
// file sees one Nest (12), as an app would. Everything else resolves as usual.
const path = require('node:path');

const matrixDir = __dirname;
const declared = new Set(Object.keys(require('./package.json').dependencies));
const fromMatrix = path.join(matrixDir, 'package.json');

/** `@scope/name/sub` → `@scope/name`; `name/sub` → `name`. */
function packageName(request) {
  const parts = request.split('/');
  return request.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

module.exports = (request, options) => {
  if (!request.startsWith('.') && !path.isAbsolute(request) && declared.has(packageName(request))) {
    return options.defaultResolver(request, {
      ...options,
      basedir: matrixDir,
      path: undefined,
      paths: undefined,
    });
  }
  return options.defaultResolver(request, options);
};
module.exports.fromMatrix = fromMatrix;
