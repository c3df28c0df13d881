// Installs Ballast the way a user does, into fresh apps outside the repository, and drives them over real HTTP.
//
// Every publishable package is built and packed (`npm pack`). Each app of ./apps (a NestJS 12 ES-module app as
// `nest new` makes it today, a NestJS 11 CommonJS app as it made it before) is written to a temporary folder with the
// sources of ./app/src, then: a plain `npm install` of its Nest stack and the tarballs (no --legacy-peer-deps, no
// --force: --prefer-offline, --no-audit and --no-fund change nothing that npm resolves), the app's own `tsc`, `node
// dist/main.js`, and requests: @Resilient on a handler (rate limit → 429), on a provider method (retries), the error
// mapping, the admin API behind its guard, and one copy of @ballast/core whichever way the app loads it.
//
// The algorithm packages' tarballs are installed next to core's and nestjs's only because they are not published
// yet: core depends on them (^0.1.0), and npm takes the copies the app already has. Registry only: nothing else is
// fetched. Run with `node --test tools/install-test/` (npm run test:install).
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const work = mkdtempSync(join(tmpdir(), 'ballast-install-'));
const tarballs = join(work, 'tarballs');
/** What an app installs: nestjs and core, and (unpublished) what core depends on. */
const installed = [
  'p2-quantile',
  'token-bucket',
  'aimd',
  'gradient2',
  'codel',
  'sre-throttle',
  'core',
  'nestjs',
];
const token = 'install-test-token';
/** The Node majors every app runs on: this one, and 22 and 24 from the npm registry (tools/node-major.sh). */
const runtimes = [{ major: Number(process.versions.node.split('.')[0]), node: process.execPath }];
for (const major of [22, 24]) {
  if (runtimes.some((r) => r.major === major)) continue;
  const bin = execFileSync('bash', [join(root, 'tools', 'node-major.sh'), String(major)], {
    encoding: 'utf8',
  });
  runtimes.push({ major, node: join(bin.trim(), 'node') });
}
runtimes.sort((a, b) => a.major - b.major);

function sh(command, args, cwd, env = process.env) {
  try {
    return execFileSync(command, args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    throw new Error(
      `${command} ${args.join(' ')} (in ${cwd}) failed:\n${error.stdout ?? ''}\n${error.stderr ?? ''}`,
    );
  }
}

before(() => {
  // Builds are cacheable (CI's NX_SKIP_NX_CACHE is for test results): `npm run lint` built them in this clone.
  sh('npx', ['nx', 'run-many', '-t', 'build', '--output-style=static'], root, {
    ...process.env,
    NX_SKIP_NX_CACHE: 'false',
  });
  mkdirSync(tarballs);
  const publishable = readdirSync(join(root, 'packages')).filter(
    (name) => JSON.parse(readFileSync(join(root, 'packages', name, 'package.json'), 'utf8')).private !== true,
  );
  sh(
    'npm',
    [
      'pack',
      '--silent',
      '--pack-destination',
      tarballs,
      ...publishable.flatMap((p) => ['-w', `packages/${p}`]),
    ],
    root,
  );
});

after(() => rmSync(work, { recursive: true, force: true }));

for (const file of readdirSync(join(here, 'apps')).filter((f) => f.endsWith('.json'))) {
  const fixture = JSON.parse(readFileSync(join(here, 'apps', file), 'utf8'));
  const name = file.replace(/\.json$/, '');

  describe(`${name}: ${fixture.about}`, () => {
    const dir = join(work, name);

    before(() => {
      mkdirSync(dir);
      writeFileSync(join(dir, 'package.json'), JSON.stringify(fixture.package, null, 2));
      writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(fixture.tsconfig, null, 2));
      cpSync(join(here, 'app', 'src'), join(dir, 'src'), { recursive: true });
      const files = readdirSync(tarballs);
      const tgz = installed.map((p) => {
        const found = files.find((f) => f.startsWith(`ballast-${p}-`) && f.endsWith('.tgz'));
        assert.ok(found, `npm pack made no tarball for @ballast/${p}`);
        return join(tarballs, found);
      });
      sh('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', ...tgz], dir);
      sh(join(dir, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json'], dir);
    });

    it("installed one copy of @ballast/core (nestjs takes the app's, as a peer)", () => {
      const copies = sh('npm', ['ls', '@ballast/core', '--all', '--parseable'], dir).trim().split('\n');
      assert.deepEqual(copies, [join(dir, 'node_modules', '@ballast', 'core')]);
    });

    for (const runtime of runtimes) describe(`on Node ${runtime.major}`, () => serves(dir, runtime.node));
  });
}

/** A fresh `node dist/main.js` of the app in `dir`, driven over HTTP. */
function serves(dir, node) {
  let server;
  let base;

  before(async () => {
    ({ server, base } = await start(dir, node));
  });

  after(async () => {
    if (server === undefined || server.exitCode !== null) return;
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGTERM');
    await exited;
  });

  it('injects a Resilience that is an instance of the class the app imports', async () => {
    const res = await fetch(`${base}/identity`);
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.equal(body.sameCore, true);
    // the app's three policies after the built-in ones (SPEC §4: transient, occ)
    assert.deepEqual(body.policies, ['transient', 'occ', 'limited', 'retrying', 'guarded']);
  });

  it('@Resilient on a handler: the rate limit answers 429 rate_limited with Retry-After once spent', async () => {
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await fetch(`${base}/limited`)).status);
    assert.deepEqual(statuses, [200, 200, 429]);
    const refused = await fetch(`${base}/limited`);
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers.get('retry-after')) > 0, 'Retry-After in whole seconds');
    assert.equal((await refused.json()).code, 'rate_limited');
  });

  it('@Resilient on a provider method: two failures retried, the third attempt answers, under its signal', async () => {
    const res = await fetch(`${base}/quote`);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { price: 42, attempts: 3, signalled: true });
  });

  it("the admin API: refused without the guard's token, force-open → 503 resilience_forced_open, clear → 200", async () => {
    const forceOpen = `${base}/resilience/policies/guarded/force-open`;
    const auth = { authorization: `Bearer ${token}` };
    assert.equal((await fetch(forceOpen, { method: 'POST' })).status, 403);
    assert.equal((await fetch(`${base}/guarded`)).status, 200);
    const opened = await fetch(forceOpen, { method: 'POST', headers: auth });
    assert.ok(opened.ok, `force-open answered ${opened.status}`);
    const refused = await fetch(`${base}/guarded`);
    assert.equal(refused.status, 503);
    assert.equal((await refused.json()).code, 'resilience_forced_open');
    const state = await (await fetch(`${base}/resilience/state?policy=guarded`, { headers: auth })).json();
    assert.equal(state.state.find((s) => s.route === null)?.forcedOpen, true);
    assert.ok((await fetch(forceOpen, { method: 'DELETE', headers: auth })).ok);
    assert.equal((await fetch(`${base}/guarded`)).status, 200);
  });
}

describe('every package, from require and from import, on each Node major', () => {
  const dir = join(work, 'plain');
  const names = [];

  before(() => {
    mkdirSync(dir);
    // what the packages' peers need to load: Nest (12 here; the CommonJS app loads nestjs with 11), ioredis, the
    // OpenTelemetry API
    const pkg = {
      name: 'ballast-install-plain',
      private: true,
      dependencies: {
        '@nestjs/common': '12.6.3',
        '@nestjs/core': '12.6.3',
        '@opentelemetry/api': '1.9.1',
        ioredis: '6.0.0',
        'reflect-metadata': '0.2.2',
        rxjs: '7.8.2',
      },
    };
    writeFileSync(join(dir, 'package.json'), JSON.stringify(pkg, null, 2));
    cpSync(join(here, 'check-formats.mjs'), join(dir, 'check-formats.mjs'));
    const tgz = readdirSync(tarballs).map((f) => join(tarballs, f));
    sh('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', ...tgz], dir);
    for (const f of readdirSync(join(dir, 'node_modules', '@ballast'))) names.push(`@ballast/${f}`);
  });

  for (const runtime of runtimes)
    it(`on Node ${runtime.major}: import finds every name require does, with the same values`, () => {
      assert.equal(names.length, readdirSync(tarballs).length);
      const report = JSON.parse(sh(runtime.node, ['check-formats.mjs', ...names], dir));
      for (const name of names) {
        assert.ok(report[name].exports > 0, `${name} exports nothing`);
        assert.deepEqual(report[name].missingFromImport, [], `${name}: names import does not see`);
        assert.deepEqual(
          report[name].notIdentical,
          [],
          `${name}: values that differ between import and require`,
        );
      }
    });
});

/** `node dist/main.js` on a free port; resolves once it prints its URL, rejects if it exits first. */
function start(dir, node) {
  const server = spawn(node, ['dist/main.js'], {
    cwd: dir,
    env: { ...process.env, PORT: '0', ADMIN_TOKEN: token, NODE_OPTIONS: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const onData = (chunk) => {
      output += chunk;
      const url = /listening on (http:\/\/\S+)/.exec(output)?.[1];
      if (url !== undefined) resolve({ server, base: url.replace('[::1]', '127.0.0.1') });
    };
    server.stdout.on('data', onData);
    server.stderr.on('data', (chunk) => (output += chunk));
    server.once('exit', (code) => reject(new Error(`the app exited (${code}) before listening:\n${output}`)));
  });
}
