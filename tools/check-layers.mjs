#!/usr/bin/env node
// Enforces the package layering of SPEC §1 mechanically: every import in a project's source must be a
// relative path, a Node built-in the layer may use, or a package the table below allows; and no source file of a
// package imports itself back through its own imports (an import cycle, type-only imports included: a cycle is
// a chain a reader cannot follow one way). Run by `npm run lint`.
import fs from 'node:fs';
import path from 'node:path';
import { builtinModules } from 'node:module';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const ALGORITHMS = ['p2-quantile', 'token-bucket', 'aimd', 'gradient2', 'codel', 'sre-throttle'];
const NEST = ['@nestjs/common', '@nestjs/core', 'rxjs', 'reflect-metadata'];
/** project folder → { ballast: allowed @ballast packages, external: allowed third-party (prefix match), node: may use node:* } */
const RULES = {
  'packages/p2-quantile': { ballast: [], external: [], node: false },
  'packages/token-bucket': { ballast: [], external: [], node: false },
  'packages/aimd': { ballast: ['p2-quantile'], external: [], node: false },
  'packages/gradient2': { ballast: [], external: [], node: false },
  'packages/codel': { ballast: [], external: [], node: false },
  'packages/sre-throttle': { ballast: [], external: [], node: false },
  'packages/core': { ballast: ALGORITHMS, external: [], node: true },
  'packages/testing': { ballast: [], external: [], node: true },
  'packages/redis': { ballast: ['core'], external: ['ioredis', 'redis', '@datadog/sketches-js'], node: true },
  'packages/opentelemetry': { ballast: ['core'], external: ['@opentelemetry/api'], node: true },
  'packages/nestjs': { ballast: ['core'], external: [...NEST, '@nestjs/terminus'], node: true },
  'packages/sim': { ballast: ['core'], external: ['echarts'], node: true },
  'apps/demo': { ballast: '*', external: '*', node: true },
  'tools/bench': { ballast: '*', external: '*', node: true },
  // The soak harness is test code: it loads the sources through tools/jest's loader, as the process-level tests do.
  'tools/soak': { ballast: '*', external: '*', node: true, testHarness: true },
};
/** Test files may also use the test kit and test-only third-party packages. */
const TEST_EXTRA = {
  ballast: ['testing'],
  external: [
    'fast-check',
    'redis6', // packages/redis's tests: node-redis 6 (npm alias of redis@6) beside the node-redis 5 dev dependency
    'supertest',
    '@nestjs/testing',
    '@nestjs/platform-express',
    '@nestjs/platform-fastify',
    '@nestjs/microservices',
    '@nestjs/websockets',
    '@nestjs/platform-socket.io',
    'socket.io-client',
    '@nestjs/schedule',
    '@nestjs/event-emitter',
    '@nestjs/cqrs',
    '@nestjs/throttler',
    '@nestjs/cache-manager',
    '@nestjs/axios',
    'axios',
    '@nestjs/graphql',
    '@nestjs/apollo',
    '@apollo/server',
    'graphql',
    'class-validator',
    'nestjs-cls',
    '@opentelemetry/sdk-metrics',
    '@opentelemetry/exporter-prometheus',
    'ioredis',
    'undici',
    '@grpc/grpc-js',
    '@grpc/proto-loader',
  ],
};

const IMPORT_RE =
  /(?:^|[\s;])(?:import|export)\s[^'"`;]*?from\s*['"]([^'"]+)['"]|(?:^|[\s;(])import\s*['"]([^'"]+)['"]|\brequire\(\s*['"]([^'"]+)['"]\s*\)|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

function* walk(dir) {
  if (!fs.existsSync(dir)) return;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name === 'dist') continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) yield* walk(p);
    else if (/\.(ts|mts|cts|js|mjs)$/.test(e.name)) yield p;
  }
}
const stripComments = (s) => s.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"\\])\/\/.*$/gm, '$1');

const violations = [];
/** Per project: each non-test source file → the source files its relative imports name. */
const graphs = new Map();
/** The file a relative import names (`./x` → x.ts or x/index.ts), if it is one. */
function resolveRelative(from, spec) {
  const base = path.resolve(path.dirname(from), spec);
  for (const candidate of [base, `${base}.ts`, path.join(base, 'index.ts')])
    if (
      /\.(ts|mts|cts|js|mjs)$/.test(candidate) &&
      fs.existsSync(candidate) &&
      fs.statSync(candidate).isFile()
    )
      return candidate;
  return undefined;
}
for (const [proj, rule] of Object.entries(RULES)) {
  const graph = new Map();
  graphs.set(proj, graph);
  for (const file of walk(path.join(root, proj, 'src'))) {
    const rel = path.relative(root, file);
    const isTest = /\.(spec|test)\.ts$/.test(file) || rel.includes(`${path.sep}__tests__${path.sep}`);
    const src = stripComments(fs.readFileSync(file, 'utf8'));
    const edges = [];
    if (!isTest) graph.set(file, edges);
    for (const m of src.matchAll(IMPORT_RE)) {
      const spec = m[1] ?? m[2] ?? m[3] ?? m[4];
      if (!spec) continue;
      if (spec.startsWith('.')) {
        const target = path.resolve(path.dirname(file), spec);
        const named = resolveRelative(file, spec);
        if (named !== undefined) edges.push(named);
        // Test code may share the test infrastructure in tools/jest (the Redis test environment, the Jest preset).
        const sharedTestTool =
          (isTest || rule.testHarness === true) &&
          target.startsWith(path.join(root, 'tools', 'jest') + path.sep);
        if (!target.startsWith(path.join(root, proj) + path.sep) && !sharedTestTool)
          violations.push(`${rel}: relative import "${spec}" leaves its project`);
        continue;
      }
      if (spec.startsWith('node:') || builtinModules.includes(spec.split('/')[0])) {
        if (!rule.node)
          violations.push(`${rel}: "${spec}" — algorithm packages are pure and may not use Node built-ins`);
        continue;
      }
      if (/^(apps|tools)\//.test(spec) || spec.includes('/apps/') || spec.includes('/tools/')) {
        violations.push(`${rel}: "${spec}" — nothing may import apps/ or tools/`);
        continue;
      }
      if (spec.startsWith('@ballast/')) {
        const name = spec.slice('@ballast/'.length).split('/')[0];
        const allowed =
          rule.ballast === '*' ||
          rule.ballast.includes(name) ||
          (isTest && TEST_EXTRA.ballast.includes(name));
        if (name === 'demo' || name === 'bench' || name === 'soak')
          violations.push(`${rel}: "${spec}" — nothing may import apps/ or tools/`);
        else if (!allowed)
          violations.push(
            `${rel}: "${spec}" — ${proj} may depend only on ${rule.ballast.length ? rule.ballast.map((n) => '@ballast/' + n).join(', ') : 'nothing from @ballast'} (SPEC §1)`,
          );
        continue;
      }
      const pkg = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
      const ok =
        rule.external === '*' || rule.external.includes(pkg) || (isTest && TEST_EXTRA.external.includes(pkg));
      if (!ok) violations.push(`${rel}: third-party import "${spec}" is not allowed in ${proj} (SPEC §1)`);
    }
  }
}
// No import cycles inside a project (Tarjan's strongly connected components over the non-test sources).
for (const [proj, graph] of graphs) {
  let next = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const visit = (v) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) !== index.get(v)) return;
    const component = [];
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      component.push(path.relative(path.join(root, proj, 'src'), w));
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v))
      violations.push(
        `${proj}: an import cycle among ${component.sort().join(', ')} — make the chain one-way`,
      );
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
}
// The algorithm packages may not share code (SPEC §1: no dependencies but aimd → p2-quantile), so each holds the
// same option-checks.ts: it must stay the same file everywhere, one way to report a bad option.
{
  const copies = ALGORITHMS.map((name) => path.join(root, 'packages', name, 'src', 'option-checks.ts'));
  const reference = fs.readFileSync(copies[0], 'utf8');
  for (const copy of copies.slice(1))
    if (!fs.existsSync(copy) || fs.readFileSync(copy, 'utf8') !== reference)
      violations.push(
        `${path.relative(root, copy)} differs from ${path.relative(root, copies[0])}: the algorithm packages' option checks are one file, copied (edit one, copy it to the others)`,
      );
}
// package.json dependencies must agree with the same table.
for (const [proj, rule] of Object.entries(RULES)) {
  const pj = path.join(root, proj, 'package.json');
  if (!fs.existsSync(pj) || rule.ballast === '*') continue;
  const json = JSON.parse(fs.readFileSync(pj, 'utf8'));
  for (const dep of Object.keys({ ...json.dependencies, ...json.peerDependencies })) {
    if (dep.startsWith('@ballast/') && !rule.ballast.includes(dep.slice(9)))
      violations.push(`${proj}/package.json: dependency ${dep} breaks the layering of SPEC §1`);
  }
}
if (violations.length) {
  console.error(`Layering violations (${violations.length}):\n  ` + violations.join('\n  '));
  process.exit(1);
}
console.log('layering: ok');
