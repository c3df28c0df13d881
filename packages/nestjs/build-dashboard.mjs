#!/usr/bin/env node
// Bundles the dashboard page (dashboard-ui/) into dist/dashboard/{dashboard.js,dashboard.css}: run by the package's
// `build` script, so the packed tarball ships it (no CDN, no download at run time). Type-checks it first.
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const pkg = dirname(fileURLToPath(import.meta.url));
execFileSync(
  process.execPath,
  [join(pkg, '../../node_modules/typescript/bin/tsc'), '-p', join(pkg, 'dashboard-ui')],
  {
    stdio: 'inherit',
  },
);
await build({
  entryPoints: { dashboard: join(pkg, 'dashboard-ui/main.ts') },
  outdir: join(pkg, 'dist/dashboard'),
  bundle: true,
  minify: true,
  format: 'iife',
  target: ['es2022'],
  legalComments: 'none',
  logLevel: 'warning',
});
console.log('dashboard bundled into dist/dashboard');
