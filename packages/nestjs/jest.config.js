// The package's suites against NestJS 11 (the workspace's stack); jest.nest12.config.js runs them against NestJS 12.
module.exports = {
  ...require('../../jest.preset.js'),
  displayName: require('./package.json').name,
  globals: { BALLAST_NEST_MAJOR: 11 },
};
