import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

/** Debian's Chromium (`apt-get install chromium`; .ci/run installs it): the tests never download a browser. */
export const CHROMIUM = '/usr/bin/chromium';

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-sync',
  '--disable-quic',
];

/** Bundles the page from its current source (what `npm run build` does for @ballast/nestjs), so the test sees it. */
export function bundleDashboard(): void {
  const script = path.resolve(__dirname, '../../../../packages/nestjs/build-dashboard.mjs');
  execFileSync(process.execPath, [script], { stdio: 'pipe' });
}

/** A headless Chromium with a fresh profile; `close()` ends it and removes the profile. */
export async function launchBrowser(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `${CHROMIUM} is missing: install Debian's Chromium (apt-get install -y chromium); .ci/run does`,
    );
  const profile = mkdtempSync(path.join(tmpdir(), 'ballast-dashboard-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport: { width: 1440, height: 900 },
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
