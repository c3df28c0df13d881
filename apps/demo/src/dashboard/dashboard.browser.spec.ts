import 'reflect-metadata';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import type { Page } from 'playwright-core';
import { AppModule } from '../app.module';
import { DemoConfig } from '../demo-config';
import { bundleDashboard, launchBrowser } from './browser';

/**
 * The dashboard in a real browser (SPEC §14.2) against the real demo app on a real port and the real clock: a browser
 * cannot run on a FakeClock. Every wait is for something to appear on the page, bounded by Playwright's timeout.
 */
const TOKEN = 'browser-test-token';
const SCREENSHOT = path.resolve(__dirname, '../../dashboard.png');
const DETAIL_SCREENSHOT = path.resolve(__dirname, '../../dashboard-detail.png');

let app: INestApplication;
let base: string;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let page: Page;

const admin = (method: string, url: string, body?: unknown): Promise<Response> =>
  fetch(`${base}${url}`, {
    method,
    headers: {
      Authorization: `Bearer ${TOKEN}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
const backend = (knobs: Record<string, unknown>): Promise<Response> =>
  fetch(`${base}/backend`, {
    method: 'PUT',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(knobs),
  });
const row = (policy: string, route = '') =>
  page.locator(`.viewport [data-policy="${policy}"][data-route="${route}"]`);
const state = async (policy: string) =>
  (
    (await (await admin('GET', `/resilience/state?policy=${policy}`)).json()) as {
      state: { forcedOpen: boolean }[];
    }
  ).state;

async function enterToken(value: string): Promise<void> {
  await page.fill('#token', value);
  await page.click('#use-token');
}

async function openDetail(policy: string): Promise<void> {
  if (await page.locator('#back').isVisible()) await page.click('#back');
  await row(policy).click();
  await page.locator('#detail-title').waitFor();
}

beforeAll(async () => {
  bundleDashboard();
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
    .overrideProvider(DemoConfig)
    .useValue(new DemoConfig({ ADMIN_TOKEN: TOKEN }))
    .compile();
  app = moduleRef.createNestApplication(new ExpressAdapter(), { logger: false });
  await app.listen(0, '127.0.0.1');
  base = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
  // A 3 s break instead of the demo's 10 s, so recovery is quick; everything else as the demo defines it.
  const spec = (await (await admin('GET', '/resilience/specs/inventory')).json()) as {
    spec: { strategies: Record<string, unknown>[] };
  };
  const strategies = spec.spec.strategies.map((s) =>
    s['type'] === 'circuitBreaker' ? { ...s, breakDuration: 3000 } : s,
  );
  expect((await admin('PUT', '/resilience/policies/inventory', { strategies })).status).toBe(200);
  browser = await launchBrowser();
  page = await browser.context.newPage();
  page.setDefaultTimeout(10_000);
  await page.goto(`${base}/resilience/ui`);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await app?.close();
});

describe('the dashboard in a browser (demo app, Chromium)', () => {
  it('asks for the token, keeps it out of the URL, and then shows every demo policy', async () => {
    expect(await page.locator('#connection').getAttribute('data-status')).toBe('no token');
    await enterToken(TOKEN);
    await page.locator('#connection[data-status="live"]').waitFor();
    for (const policy of ['public-api', 'inventory', 'inventory-hedged', 'checkout'])
      await row(policy).waitFor();
    expect(page.url()).toBe(`${base}/resilience/ui`);
    expect(await page.evaluate("sessionStorage.getItem('ballast.dashboard.token')")).toBe(TOKEN);
    // The replicas of the control plane (this demo alone: an in-memory control store), with what each applied.
    await page.locator('#replicas-title', { hasText: 'Replicas (1)' }).waitFor();
    expect(await page.locator('section.replicas li').first().textContent()).toMatch(
      /^\S+ · control version \d+ · seen \d+ s ago$/,
    );
  });

  it('shows a breaker tripped through the backend knob as open within 2 s, and closed after recovery', async () => {
    await backend({ failureRate: 1, latencyMs: 5 });
    let status = 0;
    for (let i = 0; i < 20 && status !== 503; i++)
      status = (await fetch(`${base}/products/anchor-01`)).status;
    expect(status).toBe(503); // circuit_open
    await row('inventory')
      .locator('.badge', { hasText: /^open$/ })
      .waitFor({ timeout: 2000 });
    // Some traffic everywhere for the screenshot: listings (one rate limited), a hedged read, an order.
    for (let i = 0; i < 6; i++) await fetch(`${base}/products`);
    await fetch(`${base}/products/anchor-01/stock`);
    await fetch(`${base}/orders`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ sku: 'rope-12' }),
    });
    await row('public-api')
      .locator('span', { hasText: /rate_limited/ })
      .waitFor();
    await page.screenshot({ path: SCREENSHOT });
    await backend({ failureRate: 0 });
    // After the 3 s break, a call probes and closes it.
    for (let i = 0; i < 50 && status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 200));
      status = (await fetch(`${base}/products/anchor-01`)).status;
    }
    expect(status).toBe(200);
    await row('inventory')
      .locator('.badge', { hasText: /^closed$/ })
      .waitFor({ timeout: 2000 });
    // The transitions, by name, in the row's history (the next snapshot brings them).
    await row('inventory')
      .locator('.history', { hasText: /open .* → half-open .* → closed/ })
      .waitFor();
  });

  it('shows what a policy in shadow mode would refuse, apart from what it refused', async () => {
    expect((await admin('PUT', '/resilience/policies/public-api/mode', { mode: 'shadow' })).status).toBe(200);
    for (let i = 0; i < 8; i++) expect((await fetch(`${base}/products`)).status).toBe(200);
    await row('public-api')
      .locator('span', { hasText: /shadow: would reject rate_limited \d/ })
      .waitFor();
    expect((await admin('PUT', '/resilience/policies/public-api/mode', { mode: 'enforce' })).status).toBe(
      200,
    );
  });

  it('refuses force-open from the page without a token, and forces it open with one', async () => {
    await openDetail('checkout');
    await page.click('#forget-token');
    await page.locator('#connection[data-status="no token"]').waitFor();
    await page.click('#force-open');
    await page.locator('#action-status', { hasText: 'Refused (403)' }).waitFor();
    expect(await state('checkout')).toEqual([expect.objectContaining({ route: null, forcedOpen: false })]);
    await enterToken(TOKEN);
    await page.locator('#connection[data-status="live"]').waitFor();
    await page.click('#force-open');
    await page.locator('#action-status', { hasText: 'Forced open.' }).waitFor();
    expect(await state('checkout')).toEqual([expect.objectContaining({ route: null, forcedOpen: true })]);
    await page.locator('.detail-head .badge', { hasText: 'forced open' }).waitFor();
    // Refused orders while forced open, drawn on the calls chart; then the detail view's screenshot.
    for (let i = 0; i < 3; i++)
      await fetch(`${base}/orders`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ sku: 'rope-12' }),
      });
    await page.locator('.facts dd', { hasText: 'resilience_forced_open' }).waitFor();
    await page.screenshot({ path: DETAIL_SCREENSHOT, fullPage: true });
    await page.click('#clear');
    await page.locator('#action-status', { hasText: 'Forced open cleared.' }).waitFor();
    expect(await state('checkout')).toEqual([expect.objectContaining({ forcedOpen: false })]);
  });

  it('shows an invalid retune at its path and changes nothing', async () => {
    await openDetail('public-api');
    const before = (await (await admin('GET', '/resilience/specs/public-api')).json()) as { spec: unknown };
    // The editor opens with the policy's current spec, read from the server.
    await page.waitForFunction("document.querySelector('#spec-editor').value !== ''");
    expect(JSON.parse(await page.locator('#spec-editor').inputValue())).toEqual(before.spec);
    await page.fill(
      '#spec-editor',
      JSON.stringify({ strategies: [{ type: 'rateLimit', permits: -1, per: '10s' }] }, null, 2),
    );
    await page.click('#retune');
    const error = page.locator('#spec-errors li[data-path="strategies[0].permits"]');
    await error.waitFor();
    expect(await error.textContent()).toMatch(/^strategies\[0\]\.permits must be .*got -1$/);
    await page.locator('#retune-status', { hasText: 'Not retuned, nothing changed' }).waitFor();
    expect(await page.locator('#spec-editor').getAttribute('aria-invalid')).toBe('true');
    // The path's button puts the cursor on the offending value.
    await error.locator('button').click();
    const selected = await page.evaluate(
      "(t => t.value.slice(t.selectionStart, t.selectionEnd))(document.querySelector('#spec-editor'))",
    );
    expect(selected).toBe('-1');
    expect(await (await admin('GET', '/resilience/specs/public-api')).json()).toEqual(before);
  });

  it('survives a dropped stream: reconnects and shows what happened meanwhile', async () => {
    await page.click('#back');
    await page.locator('#connection[data-status="live"]').waitFor();
    (app.getHttpServer() as Server).closeAllConnections();
    await page.locator('#connection[data-status="reconnecting"]').waitFor();
    expect((await admin('POST', '/resilience/policies/occ/force-open')).status).toBe(200);
    await page.locator('#connection[data-status="live"]').waitFor();
    await row('occ').locator('.badge', { hasText: 'forced open' }).waitFor();
    expect((await admin('DELETE', '/resilience/policies/occ/force-open')).status).toBe(200);
    await row('occ').locator('.badge', { hasText: 'no breaker' }).waitFor();
  });

  it('is usable with the keyboard: arrows move between rows, Enter opens one, Escape goes back', async () => {
    await row('checkout').focus();
    await page.keyboard.press('ArrowDown');
    const next = await page.evaluate('document.activeElement.dataset.policy');
    expect(next).toBe('inventory');
    await page.keyboard.press('Enter');
    await page.locator('#detail-title', { hasText: 'inventory · (policy-wide)' }).waitFor();
    await page.keyboard.press('Escape');
    await page.locator('.overview').waitFor();
  });

  it('stays usable with 1,000 routes: only the rows in view are in the page, filter and End reach any of them', async () => {
    const routes = Array.from({ length: 1000 }, (_, i) => `tenant-${String(i).padStart(4, '0')}`);
    for (let i = 0; i < routes.length; i += 50)
      await Promise.all(
        routes
          .slice(i, i + 50)
          .map((route) => admin('POST', `/resilience/policies/occ/force-open?route=${route}`)),
      );
    await page.locator('.count', { hasText: /^10\d\d rows$/ }).waitFor();
    expect(await page.locator('.viewport .row').count()).toBeLessThan(60);
    await page.fill('#filter', 'tenant-0777');
    await page.locator('.count', { hasText: /^1 of 10\d\d rows$/ }).waitFor();
    await row('occ', 'tenant-0777').locator('.badge', { hasText: 'forced open' }).waitFor();
    await page.fill('#filter', '');
    await row('checkout').focus();
    await page.keyboard.press('End');
    expect(await page.evaluate('document.activeElement.dataset.route')).toBe('');
    expect(await page.evaluate('document.activeElement.dataset.policy')).toBe('transient');
    await page.keyboard.press('ArrowUp'); // public-api
    await page.keyboard.press('ArrowUp');
    expect(await page.evaluate('document.activeElement.dataset.policy')).toBe('occ');
    expect(await page.evaluate('document.activeElement.dataset.route')).toBe('tenant-0999');
    expect(await page.locator('.viewport .row').count()).toBeLessThan(60);
  });
});
