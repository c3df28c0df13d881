const preset = require('../../jest.preset.js');

// `npm run test:redis-fleet` (the `test-fleet-failover` target): only the multi-process failover runs, which the
// default config leaves out. Each starts its own Cluster or Sentinel set-up and fleet of child processes.
module.exports = {
  ...preset,
  displayName: `${require('./package.json').name} fleet failover`,
  testMatch: ['<rootDir>/src/**/*.fleet-failover.spec.ts'],
};
