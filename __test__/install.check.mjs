// Installs the package the way a CMS does: `npm pack` the main package (with
// its prepack build, as a release packs it) and its linux-x64-gnu platform
// package, install the tarballs into a scratch project with no Rust
// toolchain on PATH, then load every subpath export under Node 24 and under
// Bun; and again without the platform package, where the fallback runs. Run by scripts/test.mjs on Node only,
// because it drives both runtimes itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bin, pack, root, run, scratchEnv } from './fixtures/pack.mjs';
import { EXAMPLES, example } from './fixtures/readme-examples.mjs';

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

const SUBPATHS = ['@sveltycms/ale', '@sveltycms/ale/drizzle', '@sveltycms/ale/drizzle/sqlite', '@sveltycms/ale/drizzle/pg', '@sveltycms/ale/drizzle/mysql', '@sveltycms/ale/sveltycms'];

/**
 * Loads every subpath export with require and with import, round-trips a
 * value through the core API and the drop-in, and prints what it saw,
 * counting ALE_NATIVE_UNAVAILABLE warnings.
 */
const PROBE = `
  const warnings = [];
  process.on('warning', (w) => { if (w.code === 'ALE_NATIVE_UNAVAILABLE') warnings.push(w.message); });
  const subpaths = ${JSON.stringify(SUBPATHS)};
  const required = subpaths.map((p) => Object.keys(require(p)).length);
  Promise.all(subpaths.map((p) => import(p))).then((modules) => {
    const ale = require('@sveltycms/ale');
    const ring = new ale.KeyRing(['scratch-project-secret-0123456789abcdef']);
    const env = ring.encrypt('installed ✓', 't', 'c', 'f');
    if (ring.decrypt(env, 't', 'c', 'f') !== 'installed ✓') throw new Error('round trip failed');
    process.env.ENCRYPTION_KEY = 'scratch-project-secret-0123456789abcdef';
    const dropIn = require('@sveltycms/ale/sveltycms');
    const doc = dropIn.decryptDocumentFieldsSync(dropIn.encryptDocumentFieldsSync({ a: { b: 1 } }, ['a'], { tenantId: 't', collectionId: 'c' }), ['a'], { tenantId: 't', collectionId: 'c' });
    if (doc.a.b !== 1) throw new Error('drop-in round trip failed');
    setTimeout(() => console.log(JSON.stringify({
      backend: ale.backend, required, imported: modules.map((m) => Object.keys(m).length), warnings,
      runtime: process.versions.bun ? 'bun' : process.version, env,
    })), 20);
  });
`;

/** A scratch project with the given tarballs and drizzle-orm installed, and no Rust toolchain on PATH. */
function scratch(work, name, tarballs) {
  const app = join(work, name);
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'cms-app', private: true }));
  const env = scratchEnv();
  assert.throws(() => run('cargo', ['--version'], { env }), 'cargo must not be reachable in the scratch project');
  const drizzle = `drizzle-orm@${pkg.devDependencies['drizzle-orm']}`;
  run('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', ...tarballs, drizzle], { cwd: app, env });
  return { app, env };
}

function probe(app, env) {
  return [join(bin, 'node'), join(bin, 'bun')].map((runtime) => {
    const out = JSON.parse(run(runtime, ['-e', PROBE], { cwd: app, env }).trim());
    if (!runtime.endsWith('bun')) assert.match(out.runtime, /^v24\./);
    assert.match(out.env, /^v1:/);
    assert.equal(out.required.length, SUBPATHS.length);
    assert.ok(out.required.every((n) => n > 0) && out.imported.every((n) => n > 0), `every subpath loads: ${JSON.stringify(out)}`);
    return out;
  });
}

test('a release tarball with its platform package: every subpath export loads, natively, on Node 24 and Bun', () => {
  const work = mkdtempSync(join(tmpdir(), 'ale-install-'));
  try {
    const tarballs = pack(work);
    const { app, env } = scratch(work, 'app', [tarballs.main, tarballs.platform]);
    for (const out of probe(app, env)) {
      assert.equal(out.backend, 'native', out.runtime);
      assert.deepEqual(out.warnings, []);
    }
    assert.ok(run(join(bin, 'node'), ['-p', "require.resolve('@sveltycms/ale-linux-x64-gnu')"], { cwd: app, env }).startsWith(join(app, 'node_modules')));

    // Without the platform package (an unlisted platform, a skipped optional
    // dependency): the node:crypto fallback, one warning, and it works.
    const bare = scratch(work, 'bare', [tarballs.main]);
    for (const out of probe(bare.app, bare.env)) {
      assert.equal(out.backend, 'js', out.runtime);
      assert.equal(out.warnings.length, 1, JSON.stringify(out.warnings));
      assert.match(out.warnings[0], /linux-x64/);
    }
    assert.equal(pkg.name, '@sveltycms/ale');
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});

test('the README\'s examples (and docs/tenant-keys.md\'s) pass a strict tsc --noEmit in a fresh app installed from the tarballs', () => {
  const work = mkdtempSync(join(tmpdir(), 'ale-install-types-'));
  try {
    const tarballs = pack(work);
    const { app, env } = scratch(work, 'app', [tarballs.main, tarballs.platform]);
    const dev = ['typescript', '@types/node', '@types/better-sqlite3', 'postgres'].map((name) => `${name}@${pkg.devDependencies[name]}`);
    run('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', ...dev], { cwd: app, env });
    const files = [];
    for (const [id, { page }] of Object.entries(EXAMPLES)) {
      // the README's, and those of the page its tenant-key section sends readers to
      if (page !== 'README.md' && page !== 'docs/tenant-keys.md') continue;
      const code = example(id);
      // CommonJS blocks (require) as .cts, the rest as ES modules with top-level await
      const file = `readme-${id}.${/\brequire\(/.test(code) ? 'cts' : 'mts'}`;
      writeFileSync(join(app, file), code);
      files.push(file);
    }
    assert.ok(files.length >= 5, `the README's examples: ${files}`);
    const tsconfig = {
      compilerOptions: { strict: true, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', types: ['node'], skipLibCheck: true },
      files,
    };
    writeFileSync(join(app, 'tsconfig.json'), JSON.stringify(tsconfig));
    try {
      run(join(app, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json'], { cwd: app, env });
    } catch (e) {
      assert.fail(`tsc --strict on the README's examples:\n${e.stdout ?? ''}${e.message}`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});
