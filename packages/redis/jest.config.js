const preset = require('../../jest.preset.js');

// BALLAST_REDIS_TOPOLOGIES=off (tools/test-on-node.sh, the Node 24 re-run) leaves out the suites that start a Cluster
// or a Sentinel set-up of their own: they test servers and clients, not the runtime, and CI has no time for them twice.
const topologies = /redis-(cluster|cluster-failover|sentinel)\.integration\.spec\.ts$/.source;
// The multi-process failover runs (*.fleet-failover.spec.ts) are never part of `npm test`: they take a minute and
// have a command of their own, `npm run test:redis-fleet` (jest.fleet-failover.config.js).
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
