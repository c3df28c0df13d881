import { parseDuration } from '@ballast/core';

/** `dashboardInterval` when not given (SPEC §14.2). */
export const DEFAULT_DASHBOARD_INTERVAL = '1s';
/** Bounds of `dashboardInterval`: faster is a busy loop for the page, slower is not live. */
export const MIN_DASHBOARD_INTERVAL_MS = 100;
export const MAX_DASHBOARD_INTERVAL_MS = 60_000;

/** The interval in ms, or `undefined` when `value` is not a duration within the bounds. */
export function dashboardIntervalMs(value: unknown): number | undefined {
  let ms: number;
  try {
    ms = parseDuration((value ?? DEFAULT_DASHBOARD_INTERVAL) as number | string);
  } catch {
    return undefined;
  }
  return ms >= MIN_DASHBOARD_INTERVAL_MS && ms <= MAX_DASHBOARD_INTERVAL_MS ? ms : undefined;
}

/** The dashboard's part of `ResilienceAdminModule.forRoot`'s validation: reports through the module's `fail`. */
export function checkDashboardOptions(
  o: Readonly<Record<string, unknown>>,
  fail: (field: string, constraint: string) => void,
): void {
  if (o['dashboard'] !== undefined && typeof o['dashboard'] !== 'boolean') fail('dashboard', 'a boolean');
  if (o['dashboardInterval'] !== undefined && dashboardIntervalMs(o['dashboardInterval']) === undefined)
    fail(
      'dashboardInterval',
      `a duration from ${MIN_DASHBOARD_INTERVAL_MS}ms to ${MAX_DASHBOARD_INTERVAL_MS / 1000}s (ms, or a string like '1s')`,
    );
}
