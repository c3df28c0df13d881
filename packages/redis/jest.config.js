const preset = require('../../jest.preset.js');

// BALLAST_REDIS_TOPOLOGIES=off (tools/test-on-node.sh, the Node 24 re-run) leaves out the suites that start a Cluster
// or a Sentinel set-up of their own: they test servers and clients, not the runtime, and CI has no time for them twice.
const topologies = /redis-(cluster|cluster-failover|sentinel)\.integration\.spec\.ts$/.source;
// The multi-process failover runs (*.fleet-failover.spec.ts) run after these, one at a time, from this package's
// `test` script (jest.fleet-failover.config.js; alone: `npm run test:redis-fleet`): each starts a Cluster or Sentinel
// set-up and child processes of its own, and their failover timings must not compete with the suites here.
const fleetFailover = /\.fleet-failover\.spec\.ts$/.source;
module.exports = {
  ...preset,
  displayName: require('./package.json').name,
  testPathIgnorePatterns: [
    '/node_modules/',
    fleetFailover,
    ...(process.env.BALLAST_REDIS_TOPOLOGIES === 'off' ? [topologies] : []),
  ],
};
