#!/usr/bin/env node
import { resolve } from 'node:path';
import { runScenarios, writeReport } from './report';
import { FULL_SCALE } from './scenarios';

/**
 * `npm run sim`: runs the seven scenarios at full scale and rewrites SIMULATIONS.md and docs/sim/*.svg at the
 * repository root. Options: `--duration <ms>`, `--seed <n>`, `--root <dir>`.
 */
async function main(argv: readonly string[]): Promise<void> {
  const arg = (name: string): string | undefined => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const scale = {
    duration: Number(arg('duration') ?? FULL_SCALE.duration),
    seed: Number(arg('seed') ?? FULL_SCALE.seed),
  };
  const root = resolve(arg('root') ?? resolve(__dirname, '..', '..', '..'));
  const results = await runScenarios(scale, ({ outcome, wallMs }) => {
    const missed = outcome.checks.filter((c) => !c.met).length;
    process.stdout.write(
      `${outcome.title}: ${(wallMs / 1000).toFixed(1)} s, ${outcome.checks.length - missed}/${outcome.checks.length} checks met\n`,
    );
  });
  for (const f of writeReport(results, scale, root)) process.stdout.write(`wrote ${f}\n`);
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
