// Tenant keys with the KEK in a real key service: OpenBao's transit engine
// (`bao server -dev` on loopback, started by scripts/services.sh), one
// transit key for every tenant and one per tenant. The tenant-key contract
// runs on the runtime's SQLite driver; then what only a key service has:
// an outage in the middle of a run, one bad row among tenants loaded
// together, a per-tenant shred that a restored backup cannot undo, the
// engine's own key rotation, and a token that no error repeats.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import * as mod from '@sveltycms/ale/drizzle/sqlite';
import { openSqlite, SQLITE_DRIVERS } from '../bench/sqlite.mjs';
import { codeOf, defineKeyedTables, keyedDdl, tenantKeysSuite } from './tenant-keys-suite.mjs';
import { sqliteConnection } from './fixtures/connect.mjs';
import { ale, SECRET } from './helpers.mjs';
import { serverUrl } from './servers.mjs';
import { runExample, sqliteExample } from './fixtures/readme-examples.mjs';

const address = serverUrl('BAO_ADDR');
const token = process.env.BAO_TOKEN;
const builders = { table: sqliteTable, int: integer, text };
const types = { int: 'INTEGER', text: 'TEXT', envelope: 'TEXT', index: 'TEXT', binary: 'BLOB' };
// Names of this run only: test files run side by side against one server.
const run = `ale-${randomBytes(6).toString('hex')}`;

async function sqliteFile() {
  const dir = mkdtempSync(join(tmpdir(), 'ale-transit-'));
  const file = join(dir, 'test.db');
  const s = await openSqlite(file, { driver: SQLITE_DRIVERS[0] });
  return { s, dir, file };
}

/** A request to the server as its operator would make it (not through the package). */
async function bao(method, path, body) {
  const res = await fetch(`${address}/v1/${path}`, { method, headers: { 'X-Vault-Token': token }, body: body && JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status} ${text}`);
  return text ? JSON.parse(text).data : undefined;
}


if (address) {
  const transit = (extra) => ({ transit: { address, token, ...extra } });
  for (const [name, keks] of Object.entries({
    'one transit key': { current: transit({ key: `${run}-kek` }), next: transit({ key: `${run}-kek-next` }) },
    'a transit key per tenant': { current: transit({ keyPerTenant: { prefix: `${run}-t-` } }), next: transit({ keyPerTenant: { prefix: `${run}-n-` } }) },
  })) {
    tenantKeysSuite({
      name: `sqlite (${SQLITE_DRIVERS[0]}), OpenBao transit, ${name}`,
      mod,
      builders,
      types,
      keks,
      connect: () => sqliteConnection(SQLITE_DRIVERS[0]),
    });
  }

  describe('OpenBao transit: what only a key service has', () => {
    let s;
    let dir;
    let file;
    before(async () => {
      ale.initKeyRing([SECRET]);
      ({ s, dir, file } = await sqliteFile());
      for (const stmt of keyedDdl(types)) s.exec(stmt);
    });
    after(() => {
      s.close();
      rmSync(dir, { recursive: true, force: true });
    });

    test('an outage: loading a new tenant fails with ALE_KEK_UNAVAILABLE within the bound, loaded tenants keep working, and loads work again once the service is back', { skip: !process.env.BAO_PID && process.env.CI !== 'true' && 'BAO_PID is not set' }, async () => {
      // Under CI=true the outage must be tested: scripts/services.sh, and the release workflow's test jobs, give the server's pid.
      assert.ok(process.env.BAO_PID, 'BAO_PID is required under CI=true: the outage test pauses the server by its pid');
      const pid = Number(process.env.BAO_PID);
      const kek = mod.transitKek({ address, token, key: `${run}-outage`, timeoutMs: 300, retries: 1 });
      const keys = mod.tenantKeys(s.db, { kek, table: 'outage_keys', changeCheckEveryMs: 0 });
      await keys.ready();
      const notes = defineKeyedTables(mod, builders, keys).notes;
      await keys.withTenant('acme', () => s.db.insert(notes).values({ id: 1, tenantId: 'acme', body: 'before', bodyIndex: 'before' }));
      process.kill(pid, 'SIGSTOP');
      try {
        const started = Date.now();
        const error = await keys.load('globex').then(() => null, (e) => e);
        const took = Date.now() - started;
        assert.equal(error?.code, 'ALE_KEK_UNAVAILABLE');
        assert.ok(!error.message.includes(token), 'the message holds no token');
        // two attempts of 300 ms and a 100 ms pause, for each of the two keys at once
        assert.ok(took >= 600 && took < 5_000, `failed after ${took} ms`);
        // acme's keys are in memory: reads and writes go on without the service
        await keys.withTenant('acme', () => s.db.insert(notes).values({ id: 2, tenantId: 'acme', body: 'during', bodyIndex: 'during' }));
        const rows = await keys.withTenant('acme', () => s.db.select({ body: notes.body }).from(notes).where(eq(notes.tenantId, 'acme')).orderBy(notes.id));
        assert.deepEqual(rows, [{ body: 'before' }, { body: 'during' }]);
      } finally {
        process.kill(pid, 'SIGCONT');
      }
      await keys.load('globex');
      assert.equal(keys.sealer.decrypt(keys.sealer.encrypt('after', 'globex', 'notes', 'body'), 'globex', 'notes', 'body'), 'after');
    });

    test('concurrent loads of one tenant make the calls of one load, and a load makes one request', async () => {
      const inner = mod.transitKek({ address, token, key: `${run}-count` });
      const calls = { wrap: 0, unwrap: 0 };
      const counting = { ...inner, id: inner.id, holds: inner.holds, wrap: (...a) => (calls.wrap++, inner.wrap(...a)), unwrap: (...a) => (calls.unwrap++, inner.unwrap(...a)) };
      const keys = mod.tenantKeys(s.db, { kek: counting, table: 'count_keys', changeCheckEveryMs: 0 });
      await keys.ready();
      // requests to the service, counted where they leave the process
      const realFetch = globalThis.fetch;
      const requests = [];
      globalThis.fetch = (url, init) => (requests.push(`${init?.method} ${new URL(url).pathname}`), realFetch(url, init));
      try {
        await Promise.all(Array.from({ length: 10 }, () => keys.load('acme')));
        // first use: the data key and the index key are made and wrapped, then unwrapped, once each, in one request each way
        assert.deepEqual(calls, { wrap: 2, unwrap: 2 });
        assert.deepEqual(requests, [`POST /v1/transit/encrypt/${run}-count`, `POST /v1/transit/decrypt/${run}-count`]);
        const again = mod.tenantKeys(s.db, { kek: counting, table: 'count_keys', changeCheckEveryMs: 0 });
        await Promise.all(Array.from({ length: 10 }, () => again.load('acme')));
        assert.deepEqual(calls, { wrap: 2, unwrap: 4 });
        assert.equal(requests.length, 3, 'a load from the table: one request');
      } finally {
        globalThis.fetch = realFetch;
      }
    });

    test('one bad row fails its own tenant only: the other tenants loaded in the same turn, under one transit key, load', async () => {
      const kek = () => mod.transitKek({ address, token, key: `${run}-rows` });
      const keys = mod.tenantKeys(s.db, { kek: kek(), table: 'rows_keys', changeCheckEveryMs: 0 });
      await keys.ready();
      const tenants = ['acme', 'globex', 'initech', 'umbrella'];
      for (const tenant of tenants) await keys.load(tenant);
      // acme's data key row now holds its index key's wrapped key: the associated data (tenant, key id, purpose) no longer matches
      const [{ w }] = await s.all("SELECT wrapped_key AS w FROM rows_keys WHERE tenant = 'acme' AND purpose = 'index'");
      assert.match(w, /^vault:v1:[A-Za-z0-9+/=]+$/);
      s.exec(`UPDATE rows_keys SET wrapped_key = '${w}' WHERE tenant = 'acme' AND purpose = 'data'`);
      const fresh = mod.tenantKeys(s.db, { kek: kek(), table: 'rows_keys', changeCheckEveryMs: 0 });
      const realFetch = globalThis.fetch;
      const requests = [];
      globalThis.fetch = (url, init) => (requests.push(`${init?.method} ${new URL(url).pathname}`), realFetch(url, init));
      let results;
      try {
        results = await Promise.allSettled(tenants.map((tenant) => fresh.load(tenant)));
      } finally {
        globalThis.fetch = realFetch;
      }
      assert.equal(requests[0], `POST /v1/transit/decrypt/${run}-rows`);
      assert.deepEqual(results.map((r) => r.status), ['rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
      assert.equal(results[0].reason.code, 'ALE_AUTH_FAILED');
      assert.match(results[0].reason.message, /tenant "acme"/);
      for (const tenant of tenants.slice(1)) assert.equal(fresh.sealer.decrypt(fresh.sealer.encrypt('x', tenant, 'notes', 'body'), tenant, 'notes', 'body'), 'x');
      // the same through the provider: one request, a result per item
      const p = kek();
      const aad = new Uint8Array(4);
      const good = await p.wrap(Buffer.alloc(32, 7), aad);
      requests.length = 0;
      globalThis.fetch = (url, init) => (requests.push(`${init?.method} ${new URL(url).pathname}`), realFetch(url, init));
      try {
        results = await Promise.allSettled([p.unwrap(good, p.id, aad), p.unwrap(good, p.id, new Uint8Array(5)), p.unwrap(good, p.id, aad)]);
      } finally {
        globalThis.fetch = realFetch;
      }
      assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
      assert.equal(results[1].reason.code, 'ALE_AUTH_FAILED');
      assert.deepEqual(results[0].value, Buffer.alloc(32, 7));
      assert.deepEqual(results[2].value, Buffer.alloc(32, 7));
      assert.equal(requests.length, 1);
    });

    test('a key per tenant: a backup restored after the shred holds nothing that opens the tenant, and the other tenants open', async () => {
      const kek = () => mod.transitKek({ address, token, keyPerTenant: { prefix: `${run}-bk-` } });
      const keys = mod.tenantKeys(s.db, { kek: kek(), table: 'backup_keys', changeCheckEveryMs: 0 });
      await keys.ready();
      const notes = defineKeyedTables(mod, builders, keys).notes;
      for (const [id, tenant] of [[10, 'acme'], [11, 'globex']]) {
        await keys.withTenant(tenant, () => s.db.insert(notes).values({ id, tenantId: tenant, body: `${tenant} data`, bodyIndex: 'x' }));
      }
      s.exec('PRAGMA wal_checkpoint(TRUNCATE)');
      const backup = join(dir, 'backup.db');
      copyFileSync(file, backup);
      await keys.shred('acme');
      const restored = await openSqlite(backup, { driver: SQLITE_DRIVERS[0] });
      try {
        const store = mod.tenantKeys(restored.db, { kek: kek(), table: 'backup_keys', changeCheckEveryMs: 0 });
        const table = defineKeyedTables(mod, builders, store).notes;
        const bodyOf = (tenant) => store.withTenant(tenant, () => restored.db.select({ body: table.body }).from(table).where(eq(table.tenantId, tenant)));
        // the backup's rows still hold acme's wrapped keys, but its transit key is gone
        assert.equal((await restored.all("SELECT count(*) AS n FROM backup_keys WHERE tenant = 'acme' AND wrapped_key IS NOT NULL"))[0].n, 2);
        assert.equal(await codeOf(() => bodyOf('acme')), 'ALE_AUTH_FAILED');
        assert.deepEqual(await bodyOf('globex'), [{ body: 'globex data' }]);
      } finally {
        restored.close();
      }
      // shred again (as after a failed deletion) is harmless
      await keys.shred('acme');
    });

    test('a key per tenant: a rotation that wraps its new key after a shred deleted the transit key deletes the one it made again', async () => {
      const prefix = `${run}-rs-`;
      const keys = mod.tenantKeys(s.db, { kek: mod.transitKek({ address, token, keyPerTenant: { prefix } }), table: 'race_keys', changeCheckEveryMs: 0 });
      await keys.ready();
      await keys.load('acme');
      const inner = mod.transitKek({ address, token, keyPerTenant: { prefix } });
      let entered;
      const wrapping = new Promise((r) => (entered = r));
      let release;
      const gate = new Promise((r) => (release = r));
      const gated = { id: inner.id, holds: (ref) => inner.holds(ref), unwrap: (...a) => inner.unwrap(...a), destroy: (t) => inner.destroy(t), wrap: async (...a) => (entered(), await gate, inner.wrap(...a)) };
      const rotating = mod.tenantKeys(s.db, { kek: gated, table: 'race_keys', changeCheckEveryMs: 0 });
      await rotating.load('acme');
      const rotation = rotating.rotate('acme').then(() => null, (e) => e);
      await Promise.race([wrapping, rotation]); // a rotation that fails before it wraps does not hang the test
      await keys.shred('acme');
      const { createHash } = await import('node:crypto');
      const name = prefix + createHash('sha256').update('acme').digest('base64url');
      await assert.rejects(bao('GET', `transit/keys/${name}`), /HTTP 404/, 'the shred deleted it');
      release();
      assert.equal((await rotation)?.code, 'ALE_KEY_SHREDDED');
      await assert.rejects(bao('GET', `transit/keys/${name}`), /HTTP 404/, 'the rotation deleted the one its wrap made');
      assert.equal((await s.all("SELECT count(*) AS n FROM race_keys WHERE tenant = 'acme' AND wrapped_key IS NOT NULL"))[0].n, 0);
      await Promise.all([keys.close(), rotating.close()]);
    });

    test("the engine's key rotation: old versions keep opening, rewrap moves every key to the newest, then the old version can be retired", async () => {
      const name = `${run}-rot`;
      const kek = () => mod.transitKek({ address, token, key: name });
      const keys = mod.tenantKeys(s.db, { kek: kek(), table: 'rot_keys', changeCheckEveryMs: 0 });
      await keys.ready();
      const notes = defineKeyedTables(mod, builders, keys).notes;
      await keys.withTenant('acme', () => s.db.insert(notes).values({ id: 20, tenantId: 'acme', body: 'rotated', bodyIndex: 'x' }));
      await bao('POST', `transit/keys/${name}/rotate`);
      const fresh = () => mod.tenantKeys(s.db, { kek: kek(), table: 'rot_keys', changeCheckEveryMs: 0 });
      const bodyOf = async (store) => {
        const table = defineKeyedTables(mod, builders, store).notes;
        return store.withTenant('acme', () => s.db.select({ body: table.body }).from(table).where(eq(table.id, 20)));
      };
      assert.deepEqual(await bodyOf(fresh()), [{ body: 'rotated' }], 'a key wrapped under version 1 opens after the rotation');
      const wrapped = async () => (await s.all("SELECT wrapped_key AS w FROM rot_keys WHERE tenant = 'acme'")).map((r) => r.w.split(':')[1]);
      assert.deepEqual(await wrapped(), ['v1', 'v1']);
      assert.deepEqual(await keys.rewrap(kek()), { rewrapped: 2, skipped: 0 });
      assert.deepEqual(await wrapped(), ['v2', 'v2']);
      assert.deepEqual(await keys.rewrap(kek()), { rewrapped: 0, skipped: 2 });
      await bao('POST', `transit/keys/${name}/config`, { min_decryption_version: 2 });
      assert.deepEqual(await bodyOf(fresh()), [{ body: 'rotated' }], 'opens with version 1 retired');
    });

    test('the same mount and key at another address is another KEK: a ring of the two is refused, and options.id tells them apart', async () => {
      const other = new URL(address);
      other.hostname = other.hostname === 'localhost' ? '127.0.0.1' : 'localhost';
      const here = mod.transitKek({ address, token, key: `${run}-kek` });
      const there = mod.transitKek({ address: other.href, token, key: `${run}-kek` });
      assert.equal(here.id, there.id);
      assert.notEqual(here.location, there.location);
      assert.equal(await codeOf(() => mod.tenantKeys(s.db, { kek: [here, there], table: 'two_keys' })), 'ALE_INVALID_KEY');
      const named = mod.transitKek({ address: other.href, token, key: `${run}-kek`, id: `transit:eu-2:transit/${run}-kek` });
      assert.equal(named.id, `transit:eu-2:transit/${run}-kek`);
      const keys = mod.tenantKeys(s.db, { kek: [named, here], table: 'two_keys', changeCheckEveryMs: 0 });
      await keys.close();
      for (const id of ['', 'k'.repeat(256), 7]) assert.equal(await codeOf(() => mod.transitKek({ address, token, key: 'k', id })), 'ALE_INVALID_INPUT', String(id));
    });

    test("docs/tenant-keys.md: the key-service example runs: a tenant's value round-trips, and shred deletes its transit key", async () => {
      const prefix = `${run}-readme-`;
      const code = sqliteExample('transit-kek').replace("prefix: 'cms-tenant-'", `prefix: '${prefix}'`);
      assert.notEqual(code, sqliteExample('transit-kek'), 'the example names its prefix as this test expects');
      const out = runExample('transit-kek.mjs', code, { env: { BAO_ADDR: address, BAO_TOKEN: token } });
      assert.equal(out.trim(), 'hello');
      const { createHash } = await import('node:crypto');
      const name = prefix + createHash('sha256').update('acme').digest('base64url');
      await assert.rejects(bao('GET', `transit/keys/${name}`), /HTTP 404/, "acme's transit key is gone");
    });

    test('the token appears in no error: a refused token, an unreachable service', async () => {
      const wrong = `s.${randomBytes(12).toString('hex')}`;
      for (const [what, options, code] of [
        ['a token the service refuses', { address, token: wrong, key: `${run}-denied` }, 'ALE_KEK_UNAVAILABLE'],
        ['a service that is not there', { address: 'http://127.0.0.1:9', token: wrong, key: 'k', timeoutMs: 200, retries: 1 }, 'ALE_KEK_UNAVAILABLE'],
      ]) {
        const keys = mod.tenantKeys(s.db, { kek: mod.transitKek(options), table: 'denied_keys', changeCheckEveryMs: 0 });
        await keys.ready();
        const error = await keys.load(`t-${randomBytes(4).toString('hex')}`).then(() => null, (e) => e);
        assert.equal(error?.code, code, what);
        assert.ok(!error.message.includes(wrong) && !String(error.stack).includes(wrong), `${what}: ${error.message}`);
      }
      assert.equal(await codeOf(() => mod.transitKek({ address, token, key: 'a/b' })), 'ALE_INVALID_INPUT');
      // a mount or key that steps out of the engine's path (to /v1/sys/mounts/encrypt/k1, /v1/transit/)
      assert.equal(await codeOf(() => mod.transitKek({ address, token, mount: '../v1/sys/mounts', key: 'k1' })), 'ALE_INVALID_INPUT');
      assert.equal(await codeOf(() => mod.transitKek({ address, token, key: '..' })), 'ALE_INVALID_INPUT');
      assert.equal(await codeOf(() => mod.transitKek({ address, token })), 'ALE_INVALID_INPUT');
      // the reference stored with each key, transit:<mount>/<key>, fits the key table's 255 characters
      const long = await (async () => mod.transitKek({ address, token, mount: 'm'.repeat(200), key: 'k'.repeat(60) }))().catch((e) => e);
      assert.equal(long?.code, 'ALE_INVALID_INPUT');
      assert.match(long.message, /options.mount and options.key are too long/);
      assert.equal(mod.transitKek({ address, token, mount: 'm'.repeat(190), key: 'k'.repeat(56) }).id.length, 255);
    });
  });
}
