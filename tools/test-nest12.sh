#!/usr/bin/env bash
# The NestJS 12 side of the test matrix: @ballast/nestjs's own suites (every spec jest.config.js runs: Express and
# Fastify, HTTP, GraphQL, microservices, WebSockets, provider methods, admin), type-checked and run against the
# NestJS 12 stack of tools/nest12 (packages/nestjs/jest.nest12.config.js). NestJS 12 is ESM-only: jest's CommonJS
# runtime can require() it on Node ≥ 24.9 with --experimental-vm-modules, so this runs on Node 24 from the npm
# registry (tools/node-major.sh); the NestJS 11 side runs in `nx run-many -t test` on Node 20 and 24.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(bash tools/node-major.sh 24)
echo "NestJS 12 matrix: typecheck against @nestjs/core $(node -p "require('./tools/nest12/node_modules/@nestjs/core/package.json').version")"
npx tsc -p packages/nestjs/tsconfig.nest12.json
echo "NestJS 12 matrix: tests on Node $("$bin/node" --version)"
cd packages/nestjs
# The one ExperimentalWarning this flag prints is expected (jest's vm modules).
NODE_OPTIONS="${NODE_OPTIONS:+$NODE_OPTIONS }--experimental-vm-modules" \
  "$bin/node" ../../node_modules/jest/bin/jest.js -c jest.nest12.config.js "$@"
