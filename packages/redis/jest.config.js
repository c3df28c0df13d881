const preset = require('../../jest.preset.js');

// BALLAST_REDIS_TOPOLOGIES=off (tools/test-on-node.sh, the Node 24 re-run) leaves out the suites that start a Cluster
// or a Sentinel set-up of their own: they test servers and clients, not the runtime, and CI has no time for them twice.
const topologies = /redis-(cluster|cluster-failover|sentinel)\.integration\.spec\.ts$/.source;
module.exports = {
  ...preset,
  displayName: require('./package.json').name,
  ...(process.env.BALLAST_REDIS_TOPOLOGIES === 'off'
    ? { testPathIgnorePatterns: ['/node_modules/', topologies] }
    : {}),
};
