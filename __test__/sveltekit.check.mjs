// The SvelteKit 3 app of examples/sveltekit, installed from the release
// tarballs as a CMS installs the package: `vite build` with no
// ENCRYPTION_KEY in the environment, then the built server on Node 24
// (`node build`) and on Bun (`bun build/index.js`), and `vite dev`. Each
// server is fetched over loopback: the page writes and reads a row through
// encrypted Drizzle columns (text, binary, JSON, a blind index, and a column
// under a tenant key store declared in the schema and bound at start-up) on
// the CMS's SQLite wiring for its runtime, returns the blind index in its
// load data (SvelteKit serialises it), and round-trips a document with the
// drop-in; the endpoint
// round-trips a value. What the database file holds is checked here, apart
// from the server. Run by scripts/test.mjs on Node, since it drives both
// runtimes itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { createRequire } from 'node:module';
import { bin, pack, root, run, scratchEnv } from './fixtures/pack.mjs';
import { SECRET, withoutSecrets } from './helpers.mjs';

const { KeyRing } = createRequire(import.meta.url)('../main.cjs');
/** The KEK the example's servers bind the tenant key store to (ALE_KEK); `vite build` runs without it. */
const KEK = 'sveltekit-kek-0123456789-abcdefghijklmnop';
const NODE = join(bin, 'node');
const BUN = join(bin, 'bun');

/** A free loopback port. */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** Starts `cmd args` in `cwd`, waits until `url` answers, runs `check`, and stops it. */
async function serve({ cmd, args, cwd, env, url }, check) {
  const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout.on('data', (d) => (log += d));
  child.stderr.on('data', (d) => (log += d));
  try {
    const deadline = Date.now() + 90_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${cmd} ${args.join(' ')} exited with ${child.exitCode}:\n${log}`);
      try {
        const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
        if (res.status < 500) break;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`${cmd} ${args.join(' ')} did not answer within 90 s:\n${log}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    await check();
  } catch (e) {
    e.message += `\n--- server output ---\n${log}`;
    throw e;
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode !== null ? r() : child.once('exit', r)));
  }
}

/** The page's result, from its `<pre id="result">`. */
async function page(base, id) {
  const html = await (await fetch(`${base}/?id=${id}`)).text();
  const match = /<pre id="result">([\s\S]*?)<\/pre>/.exec(html);
  assert.ok(match, html.slice(0, 500));
  const text = match[1].replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  return JSON.parse(text);
}

test('examples/sveltekit: vite build with no key, then node build, bun build/index.js and vite dev', async () => {
  const work = mkdtempSync(join(tmpdir(), 'ale-sveltekit-'));
  try {
    const tarballs = pack(work);
    const app = join(work, 'app');
    cpSync(join(root, 'examples', 'sveltekit'), app, {
      recursive: true,
      filter: (src) => !/[/\\](node_modules|build|\.svelte-kit)$/.test(src) && !/\.db(-wal|-shm)?$/.test(src),
    });
    const env = withoutSecrets(scratchEnv());
    run('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', tarballs.main, tarballs.platform], { cwd: app, env });

    const vite = join(app, 'node_modules', 'vite', 'bin', 'vite.js');
    run(NODE, [vite, 'build'], { cwd: app, env }); // no ENCRYPTION_KEY and no KEK: the schema reads no key at import, and its key store is bound at start-up
    assert.ok(existsSync(join(app, 'build', 'index.js')), 'adapter-node wrote build/index.js');

    const servers = [
      { name: 'node build', runtime: 'node:sqlite (sqlite-proxy)', cmd: NODE, args: ['build'] },
      { name: 'bun build/index.js', runtime: 'bun:sqlite', cmd: BUN, args: ['build/index.js'] },
      { name: 'vite dev', runtime: 'node:sqlite (sqlite-proxy)', cmd: NODE, args: [vite, 'dev', '--strictPort', '--host', '127.0.0.1'] },
    ];
    for (const [i, server] of servers.entries()) {
      const port = await freePort();
      const file = join(work, `server-${i}.db`);
      const base = `http://127.0.0.1:${port}`;
      // ALE_BACKEND=native: the built server must load the addon (a bundle that lost it would throw ALE_NATIVE_UNAVAILABLE, not answer from the fallback).
      const serverEnv = { ...env, ALE_BACKEND: 'native', ENCRYPTION_KEY: SECRET, ALE_KEK: KEK, DATABASE_FILE: file, PORT: String(port), HOST: '127.0.0.1', ORIGIN: base };
      const args = server.name === 'vite dev' ? [...server.args, '--port', String(port)] : server.args;
      const id = `note-${i}`;
      await serve({ cmd: server.cmd, args, cwd: app, env: serverEnv, url: `${base}/api/roundtrip?value=warm` }, async () => {
        const got = await page(base, id);
        assert.deepEqual(got, {
          driver: server.runtime,
          id,
          title: 'Grüße ✓',
          found: 1,
          body: 'a binary column',
          meta: { tags: ['x', 'y'], n: 1 },
          secret: 'under the tenant key',
          document: { sealed: true, title: 'A post', blocks: [1, 2] },
        }, server.name);
        const api = await (await fetch(`${base}/api/roundtrip?value=${encodeURIComponent('über ✓')}`)).json();
        assert.match(api.stored, /^v1:/, server.name);
        assert.deepEqual(api.back, { value: 'über ✓' }, server.name);
      });
      // What the database holds, read apart from the server.
      const db = new DatabaseSync(file);
      try {
        const row = db.prepare("SELECT title, typeof(body) AS kind, body, meta, secret FROM notes WHERE id = ?").get(id);
        assert.match(row.secret, /^v2:/, `${server.name}: secret is under the tenant key`);
        assert.match(row.title, /^v1:/, `${server.name}: title is an envelope`);
        assert.match(row.meta, /^v1:/, `${server.name}: meta is an envelope`);
        assert.equal(row.kind, 'blob', `${server.name}: body is a BLOB`);
        const ring = new KeyRing([SECRET]);
        assert.equal(ring.decrypt(row.title, 'tenant-1', 'notes', 'title'), 'Grüße ✓');
        assert.equal(ring.decryptBinary(row.body, 'tenant-1', 'notes', 'body'), 'a binary column');
      } finally {
        db.close();
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});
