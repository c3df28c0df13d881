#!/usr/bin/env node
// Checks what `npm publish` would ship for every publishable workspace package (packages/*, not `private`), from the
// tarball file list `npm pack --dry-run` computes. Run by `npm run lint` after the packages are built
// (tools/check-snippets.mjs builds them).
// - metadata: `files`, `license`, `engines.node`, `main`, `types`, and `exports["."]` with `types` first; `type` is
//   `commonjs`: one build, which `require` and `import` both load (the format decision in the root README);
// - every entry point (`main`, `types`, each `exports` target) is a file in the tarball, as are README.md, LICENSE and the
//   declaration file next to each entry point;
// - no test files in the tarball;
// - dependencies / peerDependencies / optionalDependencies are real ranges: no `*`, `file:`, `link:`, `workspace:`;
//   a `@ballast/*` dependency is `^<its version>` or `<its version>` (so it resolves from the registry to a
//   compatible release, and to the workspace package here);
// - every package that dist/**/*.js or *.d.ts imports is a Node built-in or declared in `dependencies` /
//   `peerDependencies` (a devDependency would be missing for users); bundles built for the browser (BUNDLES) are
//   self-contained and not scanned;
// - the files a package loads at run time besides its modules (BUNDLES: @ballast/nestjs's dashboard page, bundled
//   by its `build` script) are in the tarball.
import fs from 'node:fs';
import path from 'node:path';
import { builtinModules } from 'node:module';
import { spawnSync } from 'node:child_process';

/** Browser bundles a package serves at run time, by package: in the tarball, or the feature is broken for users. */
const BUNDLES = {
  '@ballast/nestjs': ['dist/dashboard/dashboard.js', 'dist/dashboard/dashboard.css'],
};

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const problems = [];

const workspaces = fs
  .readdirSync(path.join(root, 'packages'))
  .filter((d) => fs.existsSync(path.join(root, 'packages', d, 'package.json')))
  .map((d) => {
    const dir = path.join(root, 'packages', d);
    return {
      dir,
      rel: `packages/${d}`,
      pkg: JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')),
    };
  });
const versions = new Map(workspaces.map((w) => [w.pkg.name, w.pkg.version]));
const publishable = workspaces.filter((w) => !w.pkg.private);

// One npm invocation for every tarball's file list.
const pack = spawnSync(
  'npm',
  ['pack', '--dry-run', '--json', '--ignore-scripts', ...publishable.flatMap((w) => ['--workspace', w.rel])],
  { cwd: root, encoding: 'utf8' },
);
if (pack.status !== 0) {
  console.error(pack.stdout, pack.stderr);
  console.error('check-packages: npm pack --dry-run failed');
  process.exit(1);
}
const tarballs = new Map(JSON.parse(pack.stdout).map((t) => [t.name, new Set(t.files.map((f) => f.path))]));

const norm = (p) => p.replace(/^\.\//, '');
const builtins = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));
const packageOf = (spec) =>
  spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];

function* walk(dir) {
  if (!fs.existsSync(dir)) return;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(p);
    else yield p;
  }
}

for (const { dir, rel, pkg } of publishable) {
  const say = (msg) => problems.push(`${rel}/package.json: ${msg}`);
  const files = tarballs.get(pkg.name);
  if (!files) {
    say('npm pack listed no tarball for it');
    continue;
  }
  if (!Array.isArray(pkg.files) || pkg.files.length === 0)
    say('no `files`: the tarball would hold everything');
  if (!pkg.license) say('no `license`');
  if (!pkg.engines?.node) say('no `engines.node`');
  if (pkg.type !== 'commonjs')
    say(
      `"type" is ${JSON.stringify(pkg.type)}: every package is one CommonJS build (root README, Module format)`,
    );
  if (!files.has('README.md')) say('README.md is not in the tarball');
  if (!files.has('LICENSE'))
    say('LICENSE is not in the tarball (npm ships a LICENSE file from the package folder)');

  const entries = [];
  if (typeof pkg.main === 'string') entries.push(['main', pkg.main]);
  else say('no `main`');
  if (typeof pkg.types === 'string') entries.push(['types', pkg.types]);
  else say('no `types`');
  const dot = pkg.exports?.['.'];
  if (typeof dot !== 'object' || dot === null) say('no `exports["."]` conditions');
  else {
    const conditions = Object.keys(dot);
    if (conditions[0] !== 'types')
      say('`exports["."]`: `types` must be the first condition (TypeScript takes the first match)');
    if (!('default' in dot) && !('require' in dot))
      say('`exports["."]` has no `default` (or `require`) target');
    for (const [condition, target] of Object.entries(dot)) {
      if (typeof target === 'string') entries.push([`exports["."].${condition}`, target]);
    }
  }
  if (pkg.exports && !pkg.exports['./package.json'])
    say('`exports` hides package.json (add "./package.json")');
  for (const [field, target] of entries) {
    const file = norm(target);
    if (!files.has(file)) say(`${field} → ${target} is not in the tarball (built? in \`files\`?)`);
    if (file.endsWith('.js') && !files.has(file.replace(/\.js$/, '.d.ts'))) {
      say(`${field} → ${target} has no ${file.replace(/\.js$/, '.d.ts')} beside it in the tarball`);
    }
  }
  for (const bundle of BUNDLES[pkg.name] ?? [])
    if (!files.has(bundle)) say(`${bundle} is not in the tarball (does the \`build\` script bundle it?)`);
  for (const f of files) {
    if (/(^|\/)(__tests__|__mocks__)\/|\.(spec|test)\.[cm]?[jt]s$/.test(f))
      say(`test file in the tarball: ${f}`);
  }

  const declared = new Set();
  for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies']) {
    for (const [name, range] of Object.entries(pkg[field] ?? {})) {
      declared.add(name);
      if (versions.has(name)) {
        const v = versions.get(name);
        if (range !== v && range !== `^${v}`) {
          say(
            `${field}.${name} is "${range}"; the workspace has ${v}: use "^${v}" (what users get from the registry)`,
          );
        }
      } else if (range === '*' || range === '' || range === 'latest') {
        say(`${field}.${name} is "${range}": any release would do, incompatible ones included`);
      } else if (/^(file|link|workspace|portal):/.test(range)) {
        say(`${field}.${name} is "${range}": a registry install cannot resolve it`);
      }
    }
  }
  for (const peer of Object.keys(pkg.peerDependencies ?? {})) {
    if (pkg.dependencies?.[peer]) say(`${peer} is both a dependency and a peer`);
  }

  // Imports in what ships.
  const importRe =
    /\brequire\(\s*["']([^"']+)["']\s*\)|\bfrom\s+["']([^"']+)["']|\bimport\s*\(\s*["']([^"']+)["']\s*\)|^\s*import\s+["']([^"']+)["']/gm;
  for (const file of walk(path.join(dir, 'dist'))) {
    const relFile = path.relative(dir, file).split(path.sep).join('/');
    if (!/\.(c|m)?js$|\.d\.(c|m)?ts$/.test(relFile) || !files.has(relFile)) continue;
    if ((BUNDLES[pkg.name] ?? []).includes(relFile)) continue;
    const text = fs.readFileSync(file, 'utf8');
    for (const m of text.matchAll(importRe)) {
      const spec = m[1] ?? m[2] ?? m[3] ?? m[4];
      if (spec.startsWith('.') || builtins.has(spec)) continue;
      const name = packageOf(spec);
      if (name !== pkg.name && !declared.has(name)) {
        problems.push(
          `${rel}/${relFile}: imports '${spec}', which is not in dependencies or peerDependencies`,
        );
      }
    }
  }
}

if (problems.length) {
  for (const p of problems) console.error(p);
  console.error(`\ncheck-packages: ${problems.length} packaging problem(s)`);
  process.exit(1);
}
console.log(
  `check-packages: ${publishable.length} publishable packages ship their entry points, types and declared imports`,
);
