#!/usr/bin/env bash
# Every project's tests again on another Node major (the project's toolchain is Node 20; users run 22 and 24).
# Jest only: lint, typecheck and the build do not depend on the runtime. The Node binary comes from the npm
# registry (tools/node-major.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
major=${1:?usage: tools/test-on-node.sh <major>}
bin=$(bash tools/node-major.sh "$major")
export PATH="$bin:$PATH"
echo "Tests on Node $(node --version)"
# --skip-nx-cache: the cache does not key on the Node version, so it would replay the Node 20 results.
# What runs here is every published package but one: @ballast/nestjs's suites already run on Node 24 in `npm test`
# (against NestJS 12, tools/test-nest12.sh), and the install test starts a NestJS 11 app from the packed tarballs on
# Node 24. The private projects (the demo app, the bench and soak tools) run on the toolchain's Node 20 only: they
# are not what users install, and the demo's real-process and browser suites are the costliest in CI's 10 minutes.
# @ballast/redis's Cluster, Sentinel and failover suites (real topologies of their own, ~45 s) run on Node 20 only
# too: they test the servers and clients, not the runtime (packages/redis/jest.config.js leaves them out when
# BALLAST_REDIS_TOPOLOGIES=off).
BALLAST_REDIS_TOPOLOGIES=off npx nx run-many -t test --output-style=static --skip-nx-cache \
  --exclude=@ballast/nestjs,@ballast/demo,@ballast/bench,@ballast/soak
