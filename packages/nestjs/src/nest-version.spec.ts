import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The NestJS major this run of the suites is for: jest.config.js says 11, jest.nest12.config.js says 12. */
declare const BALLAST_NEST_MAJOR: number;

/**
 * The major of the copy of `name` a spec's import gets: the package.json above its entry point (some Nest 12
 * packages export no `./package.json`).
 */
function major(name: string): number {
  for (let dir = dirname(require.resolve(name)); dir !== dirname(dir); dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (!existsSync(file)) continue;
    const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version: string };
    if (pkg.name === name) return Number(pkg.version.split('.')[0]);
  }
  throw new Error(`no package.json of ${name} above ${require.resolve(name)}`);
}

describe('the NestJS test matrix', () => {
  it.each([
    '@nestjs/common',
    '@nestjs/core',
    '@nestjs/testing',
    '@nestjs/platform-express',
    '@nestjs/platform-fastify',
    '@nestjs/microservices',
    '@nestjs/websockets',
    '@nestjs/platform-socket.io',
  ])('runs the suites against %s of the major this entry names', (name) => {
    expect(major(name)).toBe(BALLAST_NEST_MAJOR);
  });

  it("resolves Nest from the matrix entry's own install: tools/nest12 for NestJS 12, the workspace root for 11", () => {
    const core = require.resolve('@nestjs/core');
    if (BALLAST_NEST_MAJOR === 12) expect(core).toContain(join('tools', 'nest12', 'node_modules'));
    else expect(core).not.toContain(join('tools', 'nest12'));
  });
});
