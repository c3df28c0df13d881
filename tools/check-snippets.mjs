#!/usr/bin/env node
// Type-checks every ```ts / ```typescript block of the READMEs against the BUILT packages, the way a user who ran
// `npm install @ballast/<pkg>` would compile them: `@ballast/*` resolves through node_modules (the workspace
// symlinks) to each package.json's `exports` → dist/*.d.ts, never to sources. Run by `npm run lint`, which builds
// the packages first (nx cache); `node tools/check-snippets.mjs --no-build` skips that build.
//
// Convention:
// - Each block is one module, compiled in one TypeScript program with all the others (strict,
//   noUncheckedIndexedAccess, exactOptionalPropertyTypes, module/moduleResolution nodenext, types node + jest,
//   legacy decorators as Nest needs). By default a block is an ES module (a `.mts` file: top-level await works, as
//   in a `"type": "module"` project). The files are virtual (nothing is written), in a `__readme_snippets__` folder
//   beside the README, so bare imports resolve from there as they would in that package's users' projects.
// - A block whose first line is `// some-name.ts` is that file of a CommonJS TypeScript project (Nest's default):
//   the other named blocks of the same README sit in the same folder and may import it as `./some-name`.
// - An HTML comment right before the block (blank lines allowed in between) adapts it:
//     <!-- snippet: declare const psp: { charge(o: unknown, opts: { signal: AbortSignal }): Promise<unknown> }; -->
//       TypeScript put before the block: placeholders the prose leaves to the reader, imports the block omits.
//     <!-- snippet: import { X } from '@ballast/core'; class Y { {{snippet}} } -->
//       with `{{snippet}}`, the block is put in its place: fragments (an options object, a decorator line, a class
//       member) are wrapped into something that compiles. The comment may span several lines.
//     <!-- snippet: skip (reason) -->
//       not checked; the reason is required. Keep these rare: pseudo-code signatures, not code.
// A `<!-- snippet` comment not followed by a ts block is an error, so none can be left behind.
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const require = createRequire(path.join(root, 'package.json'));
const ts = require('typescript');

const args = new Set(process.argv.slice(2));
const started = Date.now();

if (!args.has('--no-build')) {
  // The packages' dist is what users get; make sure it is current (a cache hit when nothing changed).
  const nx = spawnSync(
    process.execPath,
    [
      path.join(path.dirname(require.resolve('nx/package.json')), require('nx/package.json').bin.nx),
      'run-many',
      '-t',
      'build',
      '--exclude=@ballast/demo,@ballast/bench',
      '--output-style=static',
    ],
    { cwd: root, encoding: 'utf8', env: { ...process.env, NX_TUI: 'false', FORCE_COLOR: '0' } },
  );
  if (nx.status !== 0) {
    process.stdout.write(nx.stdout ?? '');
    process.stderr.write(nx.stderr ?? '');
    console.error('check-snippets: building the packages failed');
    process.exit(1);
  }
}

function readmes() {
  const list = ['README.md', 'apps/demo/README.md'];
  for (const dir of fs.readdirSync(path.join(root, 'packages')).sort()) {
    if (fs.existsSync(path.join(root, 'packages', dir, 'README.md'))) list.push(`packages/${dir}/README.md`);
  }
  return list.filter((f) => fs.existsSync(path.join(root, f)));
}

const problems = [];
const SNIPPET_TOKEN = '{{snippet}}';

/** @returns {{ readme: string, line: number, code: string, directive?: { text: string, line: number } }[]} */
function extract(readme) {
  const lines = fs.readFileSync(path.join(root, readme), 'utf8').split('\n');
  const blocks = [];
  let pending; // the last `<!-- snippet … -->` comment seen, until a block (or other text) consumes it
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w+-]*)/.exec(line);
    if (open) {
      const [, indent, fence, lang] = open;
      const body = [];
      let j = i + 1;
      while (j < lines.length && !new RegExp(`^\\s*${fence[0]}{${fence.length},}\\s*$`).test(lines[j])) {
        body.push(lines[j].startsWith(indent) ? lines[j].slice(indent.length) : lines[j]);
        j++;
      }
      if (lang === 'ts' || lang === 'typescript') {
        blocks.push({ readme, line: i + 1, code: body.join('\n'), directive: pending });
      } else if (pending) {
        problems.push(`${readme}:${pending.line}: a snippet comment must come right before a \`\`\`ts block`);
      }
      pending = undefined;
      i = j;
      continue;
    }
    if (/^\s*<!--\s*snippet\b/.test(line)) {
      if (pending)
        problems.push(`${readme}:${pending.line}: a snippet comment must come right before a \`\`\`ts block`);
      let text = line;
      const at = i;
      while (!text.includes('-->') && i + 1 < lines.length) text += '\n' + lines[++i];
      const m = /<!--\s*snippet\s*:?([\s\S]*?)-->/.exec(text);
      pending = { text: m ? m[1].trim() : '', line: at + 1 };
      continue;
    }
    if (line.trim() !== '' && pending) {
      problems.push(`${readme}:${pending.line}: a snippet comment must come right before a \`\`\`ts block`);
      pending = undefined;
    }
  }
  if (pending)
    problems.push(`${readme}:${pending.line}: a snippet comment must come right before a \`\`\`ts block`);
  return blocks;
}

/** virtual file path → { text, readme, blockLine, prefixLines, directiveLine } */
const files = new Map();
const dirs = new Set();
let checked = 0;
const skipped = [];

for (const readme of readmes()) {
  const readmeDir = path.dirname(path.join(root, readme));
  // Inside the README's own folder, so bare imports resolve through node_modules exactly as for the package's users
  // (and a package's peers installed only beside it, such as @nestjs/terminus, are found).
  const dir = path.join(readmeDir, '__readme_snippets__');
  for (const block of extract(readme)) {
    const directive = block.directive?.text ?? '';
    if (/^skip\b/.test(directive)) {
      if (!/^skip\s*\(\s*\S[\s\S]*\)$/.test(directive)) {
        problems.push(`${readme}:${block.directive.line}: \`snippet: skip\` needs a reason: skip (why)`);
      }
      skipped.push(`${readme}:${block.line} ${directive}`);
      continue;
    }
    const named = /^\/\/\s*([\w.-]+)\.ts\s*$/.exec(block.code.split('\n')[0] ?? '');
    const fileName = named ? `${named[1]}.ts` : `line-${block.line}.mts`;
    const file = path.join(dir, fileName);
    if (files.has(file)) {
      problems.push(`${readme}:${block.line}: another block of this README is already named ${fileName}`);
      continue;
    }
    let prefix = '';
    let suffix = '';
    if (directive.includes(SNIPPET_TOKEN)) {
      const at = directive.indexOf(SNIPPET_TOKEN);
      prefix = directive.slice(0, at);
      suffix = directive.slice(at + SNIPPET_TOKEN.length);
    } else if (directive) {
      prefix = directive;
    }
    if (prefix && !prefix.endsWith('\n')) prefix += '\n';
    if (suffix && !suffix.startsWith('\n')) suffix = '\n' + suffix;
    files.set(file, {
      text: prefix + block.code + suffix + '\n',
      readme,
      blockLine: block.line,
      prefixLines: prefix ? prefix.split('\n').length - 1 : 0,
      codeLines: block.code.split('\n').length,
      directiveLine: block.directive?.line,
    });
    dirs.add(dir);
    checked++;
  }
}

const options = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  moduleDetection: ts.ModuleDetectionKind.Force,
  lib: ['lib.es2022.d.ts'],
  types: ['node', 'jest'],
  strict: true,
  noUncheckedIndexedAccess: true,
  exactOptionalPropertyTypes: true,
  noImplicitOverride: true,
  esModuleInterop: true,
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
  skipLibCheck: true,
  noEmit: true,
  // No `paths`: @ballast/* must come from node_modules → the package's exports → dist, as for a user.
};

const host = ts.createCompilerHost(options, true);
const { getSourceFile, fileExists, readFile, directoryExists } = host;
host.getSourceFile = (fileName, languageVersion, ...rest) => {
  const virtual = files.get(path.resolve(fileName));
  if (virtual) return ts.createSourceFile(fileName, virtual.text, languageVersion, true);
  return getSourceFile.call(host, fileName, languageVersion, ...rest);
};
host.fileExists = (fileName) => files.has(path.resolve(fileName)) || fileExists.call(host, fileName);
host.readFile = (fileName) => files.get(path.resolve(fileName))?.text ?? readFile.call(host, fileName);
host.directoryExists = (dir) => dirs.has(path.resolve(dir)) || (directoryExists?.call(host, dir) ?? true);
host.getCurrentDirectory = () => root;

const program = ts.createProgram([...files.keys()], options, host);
const diagnostics = [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()];
for (const file of files.keys()) {
  const sf = program.getSourceFile(file);
  diagnostics.push(...program.getSyntacticDiagnostics(sf), ...program.getSemanticDiagnostics(sf));
}

// @ballast/* must have come from the built packages, not from sources.
for (const [file, virtual] of files) {
  const sf = program.getSourceFile(file);
  for (const imp of sf.imports ?? []) {
    const resolved = program.getResolvedModule(sf, imp.text, ts.getModeForUsageLocation(sf, imp, options));
    const fileName = resolved?.resolvedModule?.resolvedFileName;
    if (imp.text.startsWith('@ballast/') && fileName && !/\/dist\/.*\.d\.ts$/.test(fileName)) {
      problems.push(
        `${virtual.readme}:${virtual.blockLine}: ${imp.text} resolved to ${fileName}, not a built .d.ts`,
      );
    }
  }
}

for (const d of diagnostics) {
  const message = ts.flattenDiagnosticMessageText(d.messageText, '\n    ');
  const virtual = d.file && files.get(path.resolve(d.file.fileName));
  if (!virtual) {
    const where = d.file ? `${path.relative(root, d.file.fileName)}: ` : '';
    problems.push(`${where}TS${d.code}: ${message}`);
    continue;
  }
  const { line, character } = d.file.getLineAndCharacterOfPosition(d.start ?? 0);
  const inBlock = line - virtual.prefixLines;
  const where =
    inBlock >= 0 && inBlock < virtual.codeLines
      ? `${virtual.readme}:${virtual.blockLine + 1 + inBlock}:${character + 1}`
      : `${virtual.readme}:${virtual.directiveLine} (in the snippet comment of the block at line ${virtual.blockLine})`;
  problems.push(`${where}: TS${d.code}: ${message}`);
}

if (problems.length) {
  for (const p of problems) console.error(p);
  console.error(
    `\ncheck-snippets: ${problems.length} problem(s) in README code blocks (convention: tools/check-snippets.mjs)`,
  );
  process.exit(1);
}
const secs = ((Date.now() - started) / 1000).toFixed(1);
console.log(
  `check-snippets: ${checked} README code blocks compile against the built packages (${skipped.length} skipped) in ${secs}s`,
);
