import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * Where the page's bundle is: `dist/dashboard` of this package, written by its `build` script (esbuild, see
 * build-dashboard.mjs) and shipped in the tarball. Two levels under the package root both from `src/admin/dashboard`
 * (tests) and from `dist/admin/dashboard` (the package), so one path serves both.
 */
export const ASSET_DIR = resolve(__dirname, '../../../dist/dashboard');

/** The page's files, by name: nothing else under `ui/assets/` is served (no path is ever joined from a request). */
export const ASSETS: Readonly<Record<string, string>> = Object.freeze({
  'dashboard.js': 'text/javascript; charset=utf-8',
  'dashboard.css': 'text/css; charset=utf-8',
});

/**
 * The strict policy of every dashboard response: scripts, styles and connections from this origin only, no inline
 * script or style, no framing, no forms, no base-URL tricks.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-cache',
});

/**
 * The page's shell: no data, no inline code. Asset URLs are relative (`ui/assets/…` from `…/ui`), so the page works
 * under any global prefix; the page derives the API's base from its own address the same way.
 */
export const SHELL_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Ballast dashboard</title>
<link rel="stylesheet" href="ui/assets/dashboard.css">
<script src="ui/assets/dashboard.js" defer></script>
</head>
<body>
<div id="app"><noscript>The Ballast dashboard needs JavaScript.</noscript></div>
</body>
</html>
`;

const cache = new Map<string, Buffer>();

/** An asset's bytes, read once; `undefined` for an unknown name or a package built without the page. */
export function readAsset(name: string, dir: string = ASSET_DIR): Buffer | undefined {
  if (!Object.hasOwn(ASSETS, name)) return undefined;
  const key = `${dir}\u0000${name}`;
  let bytes = cache.get(key);
  if (bytes === undefined) {
    try {
      bytes = readFileSync(resolve(dir, name));
    } catch {
      return undefined;
    }
    cache.set(key, bytes);
  }
  return bytes;
}
