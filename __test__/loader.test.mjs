// The package entry (main.cjs): ALE_BACKEND chooses the backend, and when no
// native binary loads the package falls back to node:crypto with exactly one
// ALE_NATIVE_UNAVAILABLE warning per process. Each case runs in a child of
// this runtime, since a process loads one backend.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SECRET } from './helpers.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

/** Runs `code` (CommonJS) in a child with `env` over a clean environment; returns its JSON output and stderr. */
function child(code, { env = {}, cwd = root, file = 'probe.cjs', exec = process.execPath } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'ale-loader-'));
  try {
    const path = join(dir, file);
    writeFileSync(path, code);
    const { ALE_BACKEND, ...inherited } = process.env;
    const r = spawnSync(exec, [path], { cwd, encoding: 'utf8', env: { ...inherited, ...env } });
    let out = null;
    try {
      out = JSON.parse(r.stdout.trim().split('\n').at(-1));
    } catch {
      // reported below with stdout and stderr
    }
    assert.ok(out, `the child printed no result (exit ${r.status}):\n${r.stdout}\n${r.stderr}`);
    return { out, stderr: r.stderr, status: r.status };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A probe: loads `entry`, counts warnings by code, round-trips a value, and prints what it saw. */
const probe = (entry) => `
  const warnings = [];
  process.on('warning', (w) => warnings.push({ code: w.code, message: w.message }));
  let ale, error;
  try { ale = require(${JSON.stringify(entry)}); } catch (e) { error = { code: e.code, message: e.message }; }
  setTimeout(() => {
    if (error) return console.log(JSON.stringify({ error, warnings }));
    const ring = new ale.KeyRing([${JSON.stringify(SECRET)}]);
    const envelope = ring.encrypt('loaded ✓', 't', 'c', 'f');
    console.log(JSON.stringify({ backend: ale.backend, names: Object.keys(ale).sort(), envelope, roundTrip: ring.decrypt(envelope, 't', 'c', 'f'), warnings }));
  }, 50);
`;

const entry = join(root, 'main.cjs');
const nativeNames = [...new Set([...Object.keys(require('../index.js')), 'backend', 'hotPath'])].sort();

test('ALE_BACKEND=native loads the addon, ALE_BACKEND=js the fallback, unset the addon here; no warning; the same names', () => {
  for (const [choice, backend] of [['native', 'native'], ['js', 'js'], [undefined, 'native']]) {
    const { out, stderr } = child(probe(entry), { env: choice ? { ALE_BACKEND: choice } : {} });
    assert.equal(out.backend, backend, `ALE_BACKEND=${choice}`);
    assert.equal(out.roundTrip, 'loaded ✓');
    assert.deepEqual(out.warnings, [], `ALE_BACKEND=${choice}: ${JSON.stringify(out.warnings)}`);
    assert.ok(!stderr.includes('ALE_NATIVE_UNAVAILABLE'), stderr);
    assert.deepEqual(out.names, nativeNames, 'the entry exports the generated names and `backend`');
  }
});

test('another ALE_BACKEND is refused at load with ALE_INVALID_INPUT', () => {
  const { out } = child(probe(entry), { env: { ALE_BACKEND: 'wasm' } });
  assert.equal(out.error.code, 'ALE_INVALID_INPUT');
  assert.match(out.error.message, /ALE_BACKEND/);
});

test('without the .node binary: the fallback, one ALE_NATIVE_UNAVAILABLE warning per process, every entry on one backend; ALE_BACKEND=native throws', () => {
  // A copy of the package as npm installs it, minus the platform binary (and,
  // outside this repository, no node_modules to find a platform package in).
  const copy = mkdtempSync(join(tmpdir(), 'ale-nobinary-'));
  try {
    for (const f of ['main.cjs', 'index.js', 'package.json', 'dist']) cpSync(join(root, f), join(copy, f), { recursive: true });
    assert.ok(!readdirSync(copy).some((f) => f.endsWith('.node')));
    const pkg = join(copy, 'main.cjs');
    const code = `
      const { Worker } = require('node:worker_threads');
      const warnings = [];
      process.on('warning', (w) => warnings.push({ code: w.code, message: w.message }));
      const ale = require(${JSON.stringify(pkg)});
      const again = require(${JSON.stringify(join(copy, 'dist', 'index.js'))}); // what the Drizzle layer and the drop-in load
      const dropIn = require(${JSON.stringify(join(copy, 'dist', 'cjs', 'sveltycms', 'index.js'))});
      process.env.ENCRYPTION_KEY = ${JSON.stringify(SECRET)};
      const stored = dropIn.encryptFieldValueSync({ a: 1 }, { tenantId: 't', collectionId: 'c' }, 'f');
      ale.initKeyRing([${JSON.stringify(SECRET)}]);
      // a worker thread loads the package too: the process has warned already
      const worker = new Worker(\`
        const { parentPort } = require('node:worker_threads');
        const seen = [];
        process.on('warning', (w) => seen.push(w.code));
        const ale = require(${JSON.stringify(pkg)});
        setTimeout(() => parentPort.postMessage({ backend: ale.backend, seen, global: ale.decrypt(ale.encrypt('w', 't', 'c', 'f'), 't', 'c', 'f') }), 50);
      \`, { eval: true });
      worker.once('message', (fromWorker) => {
        setTimeout(() => console.log(JSON.stringify({
          backend: ale.backend, sameModule: again === ale, stored, fromWorker, warnings,
          envelope: new ale.KeyRing([${JSON.stringify(SECRET)}]).encrypt('no binary', 't', 'c', 'f'),
        })), 50);
      });
    `;
    const { out, stderr } = child(code, { cwd: copy });
    assert.equal(out.backend, 'js');
    assert.equal(out.sameModule, true, 'dist/index.js forwards to the entry: one instance per process');
    assert.equal(out.warnings.length, 1, JSON.stringify(out.warnings));
    const [warning] = out.warnings;
    assert.equal(warning.code, 'ALE_NATIVE_UNAVAILABLE');
    const libc = process.report?.getReport().header.glibcVersionRuntime ? '-gnu' : '-musl';
    assert.ok(warning.message.includes(`${process.platform}-${process.arch}${process.platform === 'linux' ? libc : ''}`), warning.message);
    assert.match(warning.message, /Cannot find native binding/, 'the load error is named');
    assert.deepEqual(out.fromWorker, { backend: 'js', seen: [], global: 'w' }, 'the worker: the same backend, the process-wide ring, no second warning');
    assert.equal(stderr.split('ALE_NATIVE_UNAVAILABLE').length - 1, 1, `printed once:\n${stderr}`);
    // what the fallback wrote, the addon reads
    const ale = require('../main.cjs');
    assert.equal(new ale.KeyRing([SECRET]).decrypt(out.envelope, 't', 'c', 'f'), 'no binary');
    assert.equal(JSON.parse(new ale.KeyRing([SECRET]).decrypt(out.stored, 't', 'c', 'f')).a, 1);

    const forced = child(probe(pkg), { cwd: copy, env: { ALE_BACKEND: 'native' } });
    assert.equal(forced.out.error.code, 'ALE_NATIVE_UNAVAILABLE');
    assert.match(forced.out.error.message, /ALE_BACKEND=native/);
    assert.deepEqual(forced.out.warnings, []);
    const quiet = child(probe(pkg), { cwd: copy, env: { ALE_BACKEND: 'js' } });
    assert.equal(quiet.out.backend, 'js');
    assert.deepEqual(quiet.out.warnings, [], 'ALE_BACKEND=js: chosen, so no warning');
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
});

// The machine's own Node (20 on Debian 12 here and in CI), where there is one older than the addon needs.
const systemNode = ['/usr/bin/node', '/usr/local/bin/node'].find((p) => {
  const r = spawnSync(p, ['--version'], { encoding: 'utf8' });
  return r.status === 0 && Number(r.stdout.slice(1).split('.')[0]) < 24;
});
test('on a Node older than 24 the warning (and ALE_BACKEND=native\'s error) says Node >= 24 is needed, not an npm bug', { skip: systemNode === undefined && 'no Node older than 24 on this machine' }, () => {
  const { out } = child(probe(entry), { exec: systemNode });
  assert.equal(out.backend, 'js');
  const warned = out.warnings.filter((w) => w.code === 'ALE_NATIVE_UNAVAILABLE');
  assert.equal(warned.length, 1);
  assert.match(warned[0].message, /Load error: Node v\d+\.[\d.]+ lacks Node-API functions the addon uses: Node >= 24 is needed for the native addon/);
  const native = child(probe(entry), { exec: systemNode, env: { ALE_BACKEND: 'native' } }).out;
  assert.equal(native.error.code, 'ALE_NATIVE_UNAVAILABLE');
  assert.match(native.error.message, /Node >= 24 is needed/);
});

test('ESM named imports of the CommonJS entry work, `backend` included', () => {
  const code = `
    import { KeyRing, backend, isEnvelope } from ${JSON.stringify(entry)};
    const envelope = new KeyRing([${JSON.stringify(SECRET)}]).encrypt('esm', 't', 'c', 'f');
    console.log(JSON.stringify({ backend, envelope: isEnvelope(envelope) }));
  `;
  for (const choice of ['native', 'js']) {
    const { out } = child(code, { env: { ALE_BACKEND: choice }, file: 'probe.mjs' });
    assert.deepEqual(out, { backend: choice, envelope: true });
  }
});
