// The same test suites as jest.config.js, against NestJS 12 (tools/nest12): run by tools/test-nest12.sh on
// Node ≥ 24.9 with --experimental-vm-modules, where jest's CommonJS runtime can require() ESM-only Nest 12.
const base = require('./jest.config.js');

module.exports = {
  ...base,
  displayName: `${base.displayName} (NestJS 12)`,
  globals: { BALLAST_NEST_MAJOR: 12 },
  resolver: require.resolve('../../tools/nest12/jest-resolver.cjs'),
};
