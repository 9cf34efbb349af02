// Installs the package the way a CMS does: `npm pack` the main package and
// its linux-x64-gnu platform package, install both tarballs into a scratch
// project with no Rust toolchain on PATH, then require it under Node 24 and
// under Bun and round-trip a value. Run by scripts/test.mjs on Node only,
// because it drives both runtimes itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const bin = join(root, 'node_modules', '.bin');

function run(cmd, args, opts = {}) {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...opts });
}

test('npm pack → install in a scratch project → require on Node 24 and Bun', () => {
  const work = mkdtempSync(join(tmpdir(), 'ale-install-'));
  try {
    const platformDir = join(work, 'linux-x64-gnu');
    cpSync(join(root, 'npm', 'linux-x64-gnu'), platformDir, { recursive: true });
    cpSync(join(root, 'ale.linux-x64-gnu.node'), join(platformDir, 'ale.linux-x64-gnu.node'));
    const packs = join(work, 'packs');
    mkdirSync(packs);
    const mainTgz = run('npm', ['pack', '--silent', '--pack-destination', packs], { cwd: root }).trim().split('\n').pop();
    const platTgz = run('npm', ['pack', '--silent', '--pack-destination', packs], { cwd: platformDir }).trim().split('\n').pop();

    const app = join(work, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'cms-app', private: true }));
    // No cargo, rustc or repo binaries on PATH: only system dirs and the pinned runtimes.
    const cleanPath = process.env.PATH.split(delimiter).filter((p) => !/cargo|rustup/.test(p) && p !== bin).join(delimiter);
    const env = { ...process.env, PATH: cleanPath, CARGO_HOME: '/nonexistent', RUSTUP_HOME: '/nonexistent' };
    assert.throws(() => run('cargo', ['--version'], { env }), 'cargo must not be reachable in the scratch project');
    run('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', join(packs, mainTgz), join(packs, platTgz)], { cwd: app, env });

    const probe = `
      const ale = require('@sveltycms/ale');
      const path = require.resolve('@sveltycms/ale-linux-x64-gnu');
      const ring = new ale.KeyRing(['scratch-project-secret-0123456789abcdef']);
      const env = ring.encrypt('installed ✓', 't', 'c', 'f');
      if (ring.decrypt(env, 't', 'c', 'f') !== 'installed ✓') throw new Error('round trip failed');
      console.log(JSON.stringify({ path, runtime: process.versions.bun ? 'bun' : process.version, env }));
    `;
    for (const runtime of [join(bin, 'node'), join(bin, 'bun')]) {
      const out = JSON.parse(run(runtime, ['-e', probe], { cwd: app, env }).trim());
      assert.ok(out.path.startsWith(join(app, 'node_modules')), `loaded from ${out.path}`);
      assert.match(out.env, /^v1:/);
      if (!runtime.endsWith('bun')) assert.match(out.runtime, /^v24\./);
    }
    assert.equal(pkg.name, '@sveltycms/ale');
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});
