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

/** Runs `script` in a fresh Node process with args; the child prints one JSON line on stdout. */
export function runChild(script, args, nodeArgs = []) {
  const out = execFileSync(process.execPath, [...nodeArgs, script, ...args], {
    encoding: 'utf8',
    maxBuffer: 1 << 24,
  });
  const line = out.trim().split('\n').pop();
  return JSON.parse(line);
}

export function machine() {
  const cpu = os.cpus()[0]?.model ?? 'unknown cpu';
  return `Node ${process.version}, ${os.cpus().length} × ${cpu.trim()}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, loadavg ${os
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
