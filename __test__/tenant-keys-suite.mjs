// The tenant-key contract (keys per tenant, rotation, shredding, rewrap and
// the conversion from v1), run against every dialect's real database and
// driver. A dialect test file supplies its module, table builders, SQL
// types, and a connect() that returns a Drizzle `db`, a raw `query(sql)`,
// and how a second process reaches the same database.
import { describe, test, before, beforeEach, afterEach, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { and, eq, sql } from 'drizzle-orm';
import { getTableConfig as mysqlConfig } from 'drizzle-orm/mysql-core';
import { getTableConfig as pgConfig } from 'drizzle-orm/pg-core';
import { getTableConfig as sqliteConfig } from 'drizzle-orm/sqlite-core';
import { ale, eventually, OLD_SECRET, SECRET } from './helpers.mjs';

export const KEK = 'kek-secret-0123456789-abcdefghijklmnop';
export const NEW_KEK = 'new-kek-secret-0123456789-abcdefghijkl';

/** A KEK from its description: a secret as it is, `{ transit: options }` as a transitKek. The shred watcher builds its own the same way. */
export const kekFrom = (mod, spec) => (typeof spec === 'string' ? spec : mod.transitKek(spec.transit));
const watcher = fileURLToPath(new URL('./fixtures/shred-watcher.mjs', import.meta.url));
const skewed = fileURLToPath(new URL('./fixtures/skewed-store.mjs', import.meta.url));

/** The code of what `fn` throws or rejects with; 'no error' when it succeeds. */
export async function codeOf(fn) {
  try {
    await fn();
  } catch (e) {
    return e.code;
  }
  return 'no error';
}

/** The tables of the suite, over a dialect's builders; `keys` is the store their columns use. */
export function defineKeyedTables(mod, { table, int, text }, keys) {
  return {
    notes: table('tk_notes', {
      id: int('id').primaryKey(),
      tenantId: text('tenant_id').notNull(),
      body: mod.encryptedText('body', { collection: 'notes', keys }),
      bodyIndex: mod.blindIndexColumn('body_index', { collection: 'notes', field: 'body', keys }),
      meta: mod.encryptedJson('meta', { collection: 'notes', keys, storage: 'binary' }),
    }),
    // the same table before it had tenant keys: v1 values under the process-wide ring
    plainNotes: table('tk_notes', {
      id: int('id').primaryKey(),
      tenantId: text('tenant_id').notNull(),
      body: mod.encryptedText('body', { collection: 'notes' }),
      bodyIndex: mod.blindIndexColumn('body_index', { collection: 'notes', field: 'body' }),
      meta: mod.encryptedJson('meta', { collection: 'notes', storage: 'binary' }),
    }),
  };
}

export const keyedDdl = ({ int, text, envelope, index, binary }) => [`CREATE TABLE tk_notes (id ${int} PRIMARY KEY, tenant_id ${text} NOT NULL, body ${envelope}, body_index ${index}, meta ${binary})`];

/** Runs the shred watcher in another process; resolves with what it printed once it is watching. */
function startWatcher(target, tenant, kek) {
  const p = spawn(process.execPath, [watcher], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ALE_WATCH: JSON.stringify({ ...target, tenant, kek }) } });
  let out = '';
  const lines = [];
  const waiters = [];
  p.stdout.on('data', (d) => {
    out += d;
    let i;
    while ((i = out.indexOf('\n')) >= 0) {
      lines.push(out.slice(0, i));
      out = out.slice(i + 1);
      for (const w of waiters.splice(0)) w();
    }
  });
  const next = async (prefix, ms = 20_000) => {
    const deadline = Date.now() + ms;
    for (;;) {
      const found = lines.find((l) => l.startsWith(prefix));
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`the watcher did not print ${prefix} in ${ms} ms (got ${JSON.stringify(lines)})`);
      await new Promise((r) => {
        waiters.push(r);
        setTimeout(r, 50);
      });
    }
  };
  const closed = new Promise((r) => p.on('close', (code) => r(code)));
  return { next, closed, kill: () => p.kill('SIGKILL') };
}

/**
 * @param {object} d
 * @param {string} d.name
 * @param {any} d.mod           the '@sveltycms/ale/drizzle/<dialect>' module
 * @param {object} d.builders   { table, int, text }
 * @param {object} d.types      SQL types for keyedDdl
 * @param {() => Promise<{ db: any, query: (sql: string) => Promise<any[]>, close: () => any, target: object }>} d.connect
 * @param {{ current: any, next: any }} [d.keks]  the KEK and the one rewrap moves to, as kekFrom takes them; local secrets by default
 */
export function tenantKeysSuite(d) {
  const { mod } = d;
  const specs = d.keks ?? { current: KEK, next: NEW_KEK };
  const kek = () => kekFrom(mod, specs.current);
  const newKek = () => kekFrom(mod, specs.next);
  /** A KEK provider of `spec` with some of its calls replaced: `over(inner)` gives the replacements. */
  const kekWith = (spec, over) => {
    const inner = typeof spec === 'string' ? mod.localKek(spec) : kekFrom(mod, spec);
    return { ...inner, id: inner.id, holds: (ref) => inner.holds(ref), wrap: (...a) => inner.wrap(...a), unwrap: (...a) => inner.unwrap(...a), ...over(inner) };
  };
  /** The current KEK, whose wraps and unwraps fail with ALE_KEK_UNAVAILABLE while `down.wrap` or `down.unwrap` is set, as a key service in an outage. */
  const flakyKek = (down) => {
    const refuse = () => Promise.reject(Object.assign(new Error('the KEK service is down'), { code: 'ALE_KEK_UNAVAILABLE' }));
    return kekWith(specs.current, (inner) => ({ wrap: (...a) => (down.wrap ? refuse() : inner.wrap(...a)), unwrap: (...a) => (down.unwrap ? refuse() : inner.unwrap(...a)) }));
  };
  // Every store a test makes is closed after it: withTenant() loads from
  // every open store a column names, and the next test drops their table.
  const made = [];
  const tenantKeys = (...args) => {
    const store = mod.tenantKeys(...args);
    made.push(store);
    return store;
  };
  let conn;
  let db;
  let keys;
  let t;

  const raw = async (id, column = 'body') => (await conn.query(`SELECT ${column} AS v FROM tk_notes WHERE id = ${id}`))[0]?.v;
  const insert = (tenant, rows) => keys.withTenant(tenant, () => db.insert(t.notes).values(rows.map((r) => ({ tenantId: tenant, bodyIndex: r.body, ...r }))));
  const read = (tenant) => keys.withTenant(tenant, () => db.select().from(t.notes).where(eq(t.notes.tenantId, tenant)).orderBy(t.notes.id));

  describe(`tenant keys: ${d.name}`, () => {
    before(async () => {
      ale.initKeyRing([SECRET]);
      conn = await d.connect();
      db = conn.db;
    });
    beforeEach(async () => {
      for (const stmt of ['DROP TABLE IF EXISTS tk_notes', 'DROP TABLE IF EXISTS ale_keys', 'DROP TABLE IF EXISTS ale_keys_b', ...keyedDdl(d.types)]) await conn.query(stmt);
      keys = tenantKeys(db, { kek: kek(), changeCheckEveryMs: 0 });
      t = defineKeyedTables(mod, d.builders, keys);
      await keys.ready();
      await keys.ready(); // a second time is a no-op
    });
    afterEach(async () => {
      for (const store of made.splice(0)) await store.close().catch(() => undefined);
    });
    after(() => conn?.close());

    test('values round-trip under the tenant key: v2 naming its active key, text and binary; the stored key table matches aleKeys', async () => {
      await insert('acme', [
        { id: 1, body: 'hello acme', meta: { n: 1, s: 'ünï' } },
        { id: 2, body: 'second', meta: null },
      ]);
      await insert('globex', [{ id: 3, body: 'hello globex', meta: [1, 2] }]);
      assert.deepEqual(
        (await read('acme')).map((r) => [r.id, r.body, r.meta]),
        [
          [1, 'hello acme', { n: 1, s: 'ünï' }],
          [2, 'second', null],
        ],
      );
      const [info] = (await keys.describe('acme')).filter((k) => k.purpose === 'data');
      assert.equal(info.state, 'active');
      assert.equal(info.generation, 1);
      assert.equal(info.kek, keys.kekId);
      assert.ok((await raw(1)).startsWith(`v2:${info.keyId}:`));
      const meta = await raw(1, 'meta');
      assert.equal(Buffer.from(meta)[0], 2);
      assert.equal(Buffer.from(meta).subarray(1, 17).toString('base64url'), info.keyId);
      // the index lives under the tenant's index key: another tenant's index of the same text differs
      const [a] = await keys.withTenant('acme', () => db.select({ i: sql`${t.notes.bodyIndex}` }).from(t.notes).where(eq(t.notes.id, 1)));
      const other = await keys.withTenant('globex', () => keys.sealer.blindIndex('hello acme', 'globex', 'notes', 'body'));
      assert.notEqual(a.i, other);
      // lookups by blind index
      const found = await keys.withTenant('acme', () => db.select({ id: t.notes.id }).from(t.notes).where(mod.matchBlindIndex(t.notes.bodyIndex, 'second')));
      assert.deepEqual(found, [{ id: 2 }]);
      // the exported table definition reads the same rows
      const rows = await db.select().from(mod.aleKeys).where(eq(mod.aleKeys.tenant, 'acme'));
      assert.deepEqual(rows.map((r) => r.purpose).sort(), ['data', 'index']);
      assert.ok(rows.every((r) => typeof r.wrappedKey === 'string' && r.wrappedKey.length > 40));
    });

    test('the key table ready() creates has the columns, nullability and indexes of aleKeys, the Drizzle table drizzle-kit reads', async () => {
      const dialect = conn.target.dialect;
      const config = { sqlite: sqliteConfig, pg: pgConfig, mysql: mysqlConfig }[dialect](mod.aleKeys);
      const expected = config.columns.map((c) => [c.name, c.notNull || c.primary]).sort();
      const introspect = {
        sqlite: async () => ({
          columns: (await conn.query("SELECT * FROM pragma_table_info('ale_keys')")).map((c) => [c.name, Boolean(c.notnull) || Boolean(c.pk)]),
          indexes: (await conn.query("SELECT name FROM pragma_index_list('ale_keys')")).map((i) => i.name),
        }),
        pg: async () => ({
          columns: (await conn.query("SELECT column_name AS name, is_nullable AS n FROM information_schema.columns WHERE table_name = 'ale_keys'")).map((c) => [c.name, c.n === 'NO']),
          indexes: (await conn.query("SELECT indexname AS name FROM pg_indexes WHERE tablename = 'ale_keys'")).map((i) => i.name),
        }),
        mysql: async () => ({
          columns: (await conn.query("SELECT COLUMN_NAME AS name, IS_NULLABLE AS n FROM information_schema.COLUMNS WHERE TABLE_NAME = 'ale_keys' AND TABLE_SCHEMA = DATABASE()")).map((c) => [c.name, c.n === 'NO']),
          indexes: (await conn.query("SELECT DISTINCT INDEX_NAME AS name FROM information_schema.STATISTICS WHERE TABLE_NAME = 'ale_keys' AND TABLE_SCHEMA = DATABASE()")).map((i) => i.name),
        }),
      }[dialect];
      const stored = await introspect();
      assert.deepEqual(stored.columns.sort(), expected, 'columns and NOT NULL');
      // the primary key's own index is named by each database; the others by the builders
      const named = stored.indexes.filter((n) => !/^(PRIMARY|sqlite_autoindex_.*|ale_keys_pkey)$/.test(n)).sort();
      assert.deepEqual(named, config.indexes.map((i) => i.config.name).sort(), 'indexes');
    });

    test("withTenant from the dialect's module loads the tenant's keys: a query inside reads and writes a keys column", async () => {
      const fresh = tenantKeys(db, { kek: kek(), changeCheckEveryMs: 0 });
      const table = defineKeyedTables(mod, d.builders, fresh).notes;
      assert.equal(fresh.loadedTenants, 0);
      await mod.withTenant('hooli', () => db.insert(table).values({ id: 8, tenantId: 'hooli', body: 'scoped', bodyIndex: 'scoped', meta: { n: 8 } }));
      assert.equal(fresh.loadedTenants, 1, 'loaded by withTenant');
      assert.match(await raw(8), new RegExp(`^v2:${fresh.activeKeyId('hooli')}:`));
      const [row] = await mod.withTenant('hooli', () => db.select().from(table).where(mod.matchBlindIndex(table.bodyIndex, 'scoped')));
      assert.deepEqual([row.body, row.meta], ['scoped', { n: 8 }]);
      // Two new stores, neither loaded: one withTenant loads the tenant in both, once each.
      const other = tenantKeys(db, { kek: kek(), changeCheckEveryMs: 0, table: 'ale_keys_b' });
      await other.ready();
      const otherTable = defineKeyedTables(mod, d.builders, other).notes;
      fresh.forget('hooli');
      const bodies = await mod.withTenant('hooli', async () => {
        await db.insert(otherTable).values({ id: 10, tenantId: 'hooli', body: 'other store' });
        const a = await db.select().from(table).where(eq(table.id, 8));
        const b = await db.select().from(otherTable).where(eq(otherTable.id, 10));
        return [a[0].body, b[0].body];
      });
      assert.deepEqual(bodies, ['scoped', 'other store']);
      assert.equal(fresh.loadedTenants, 1, 'loaded again after forget()');
      assert.equal(other.loadedTenants, 1, "the other store's keys were loaded too");
      assert.notEqual(other.activeKeyId('hooli'), fresh.activeKeyId('hooli'));
      assert.equal(Number((await conn.query('SELECT COUNT(*) AS n FROM ale_keys_b'))[0].n), 2, 'one data key and one index key');
      await other.close();
      await conn.query('DROP TABLE ale_keys_b');
      // A store that cannot load (its table is missing) fails only the query that needs its keys, with the load's error.
      const broken = tenantKeys(db, { kek: kek(), changeCheckEveryMs: 0, table: 'ale_keys_missing' });
      const brokenTable = defineKeyedTables(mod, d.builders, broken).notes;
      const loadError = await broken.load('hooli').then(() => null, (e) => e);
      assert.ok(loadError, 'the load fails');
      assert.deepEqual(await mod.withTenant('hooli', () => db.select({ body: table.body }).from(table).where(eq(table.id, 8))), [{ body: 'scoped' }]);
      const needed = await mod.withTenant('hooli', () => db.select().from(brokenTable).where(eq(brokenTable.id, 8))).then(() => null, (e) => e);
      // the load's error has no ALE_* code (a coded one, as ALE_KEK_UNAVAILABLE, is thrown as it is): ALE_KEY_NOT_LOADED saying why
      assert.equal(needed?.code, 'ALE_KEY_NOT_LOADED');
      // why, in the driver's words (the missing table), without the query's parameters, which Drizzle's own message lists; load() said the same
      assert.equal(loadError.code, 'ALE_KEY_NOT_LOADED');
      assert.match(loadError.message, /could not be loaded: .*(no such table|does not exist|doesn't exist)/);
      assert.ok(needed.message.includes(loadError.message), `${needed.message}\n${loadError.message}`);
      assert.ok(!/params:/.test(needed.message), needed.message);
      await broken.close();
      // The store's own withTenant is the same function.
      assert.equal(await fresh.withTenant('hooli', () => mod.currentTenant()), 'hooli');
      await assert.rejects(mod.withTenant('a:b', () => 1), { code: 'ALE_INVALID_CONTEXT' });
    });

    test('withTenant and close(): refused tenant ids reject, an unbound store rejects, a coded load error is thrown as it is, a later load clears it, and a closed store forgets, counts and can be bound again', async () => {
      const store = tenantKeys(db, { kek: kek(), changeCheckEveryMs: 0, flushEveryMs: 0 });
      const table = defineKeyedTables(mod, d.builders, store).notes;
      // a tenant id the key table cannot hold: a rejection, never a throw
      const long = 'x'.repeat(192);
      let returned;
      assert.doesNotThrow(() => (returned = mod.withTenant(long, () => 1)));
      await assert.rejects(returned, { code: 'ALE_INVALID_CONTEXT' });
      // declared, not bound: its own withTenant says so
      const declared = mod.tenantKeys();
      await assert.rejects(declared.withTenant('acme', () => 1), { code: 'ALE_NOT_INITIALIZED' });
      // a KEK that refuses: the column throws the load's own coded error, until a load succeeds
      const down = { wrap: true };
      const shaky = tenantKeys(db, { kek: flakyKek(down), changeCheckEveryMs: 0, table: 'ale_keys_b' });
      await shaky.ready();
      const shakyTable = defineKeyedTables(mod, d.builders, shaky).notes;
      const failed = await mod.withTenant('umbrella', () => db.insert(shakyTable).values({ id: 30, tenantId: 'umbrella', body: 'x' })).then(() => null, (e) => e);
      assert.equal(failed?.code, 'ALE_KEK_UNAVAILABLE');
      down.wrap = false;
      await shaky.load('umbrella');
      shaky.forget('umbrella');
      assert.equal(await codeOf(() => shaky.sealer.encrypt('x', 'umbrella', 'notes', 'body')), 'ALE_KEY_NOT_LOADED', 'the failure was cleared');
      await shaky.close();
      await conn.query('DROP TABLE ale_keys_b');
      // keys in memory that cannot be checked again (the key table is gone) are not used through withTenant
      const brief = tenantKeys(db, { kek: kek(), changeCheckEveryMs: 0, recheckAfterMs: 1, table: 'ale_keys_b' });
      await brief.ready();
      const briefTable = defineKeyedTables(mod, d.builders, brief).notes;
      await mod.withTenant('acme', () => db.insert(briefTable).values({ id: 32, tenantId: 'acme', body: 'brief' }));
      await conn.query('DROP TABLE ale_keys_b');
      await new Promise((r) => setTimeout(r, 200));
      const unchecked = await mod.withTenant('acme', () => db.select().from(briefTable).where(eq(briefTable.id, 32))).then(() => null, (e) => e);
      assert.equal(unchecked?.code, 'ALE_KEY_NOT_LOADED');
      assert.match(unchecked.message, /could not be loaded/);
      assert.equal(brief.loadedTenants, 0, 'dropped from memory');
      // its count cannot be written (the table is gone): close() rejects with that, and closes all the same
      await assert.rejects(brief.close());
      assert.equal(brief.bound, false);
      // close(): what was sealed is counted, the keys leave memory, and bind() makes the store usable again
      await mod.withTenant('acme', () => db.insert(table).values({ id: 31, tenantId: 'acme', body: 'counted' }));
      const keyId = store.activeKeyId('acme');
      await store.close();
      assert.equal(store.loadedTenants, 0);
      assert.equal(store.bound, false);
      assert.equal(await codeOf(() => store.load('acme')), 'ALE_NOT_INITIALIZED');
      store.bind(db, { kek: kek() });
      assert.equal((await store.describe('acme')).find((k) => k.keyId === keyId).encryptions, 1, 'the count was written by close()');
      assert.deepEqual(await mod.withTenant('acme', () => db.select({ body: table.body }).from(table).where(eq(table.id, 31))), [{ body: 'counted' }]);
    });

    test('a re-read that finds none of a loaded tenant’s rows writes back the rows of the keys it holds (a rolled-back transaction made them): values sealed meanwhile keep opening', async () => {
      const store = tenantKeys(db, { kek: kek(), changeCheckEveryMs: 0, recheckAfterMs: 20, table: 'ale_keys_b' });
      await store.ready();
      const notes = defineKeyedTables(mod, d.builders, store).notes;
      await mod.withTenant('acme', () => db.insert(notes).values({ id: 40, tenantId: 'acme', body: 'before' }));
      const before = (await conn.query("SELECT key_id AS k FROM ale_keys_b WHERE tenant = 'acme' ORDER BY purpose")).map((r) => r.k);
      assert.equal(before.length, 2);
      // what a rollback of the transaction that created them leaves: no row, and the keys still in memory
      await conn.query("DELETE FROM ale_keys_b WHERE tenant = 'acme'");
      await mod.withTenant('acme', () => db.insert(notes).values({ id: 41, tenantId: 'acme', body: 'sealed meanwhile' }));
      await new Promise((r) => setTimeout(r, 250)); // past recheckAfterMs, on the store's clock of 100 ms steps
      await store.load('acme'); // the re-read
      const after = (await conn.query("SELECT key_id AS k FROM ale_keys_b WHERE tenant = 'acme' ORDER BY purpose")).map((r) => r.k);
      assert.deepEqual(after, before, 'the same keys, not new ones');
      // a store that never held them reads them from the table
      const fresh = tenantKeys(db, { kek: kek(), changeCheckEveryMs: 0, table: 'ale_keys_b' });
      const freshNotes = defineKeyedTables(mod, d.builders, fresh).notes;
      const rows = await fresh.withTenant('acme', () => db.select({ body: freshNotes.body }).from(freshNotes).orderBy(freshNotes.id));
      assert.deepEqual(rows.map((r) => r.body), ['before', 'sealed meanwhile']);
    });

    test('close() keeps no keys that a load begun while it wrote the counts brought in: the closed store seals and opens nothing', async () => {
      const store = tenantKeys(db, { kek: kek(), changeCheckEveryMs: 0 });
      await store.load('acme');
      store.sealer.encrypt('counted', 'acme', 'notes', 'body'); // a count for close() to write
      const closing = store.close();
      const loading = store.withTenant('globex', () => store.sealer.encrypt('x', 'globex', 'notes', 'body')).then(
        (sealed) => sealed,
        () => null,
      );
      await closing;
      await loading;
      assert.equal(store.loadedTenants, 0);
      // not loaded, or (globex, whose load the close cut short, depending on the driver's timing) the load's own refusal
      for (const tenant of ['acme', 'globex']) assert.match(await codeOf(() => store.sealer.encrypt('y', tenant, 'notes', 'body')), /^ALE_(KEY_NOT_LOADED|NOT_INITIALIZED)$/, tenant);
    });

    test('a tenant whose keys are not loaded: ALE_KEY_NOT_LOADED naming how to load them; concurrent loads create one set of keys', async () => {
      const fresh = tenantKeys(db, { kek: kek(), changeCheckEveryMs: 0 });
      // a column with a fixed tenant, used outside withTenant: nothing loads its keys
      const table = d.builders.table('tk_notes', {
        id: d.builders.int('id').primaryKey(),
        tenantId: d.builders.text('tenant_id').notNull(),
        body: mod.encryptedText('body', { collection: 'notes', keys: fresh, tenant: 'initech' }),
      });
      let error;
      try {
        await db.insert(table).values({ id: 9, tenantId: 'initech', body: 'x' });
      } catch (e) {
        error = e;
      }
      assert.equal(error?.code, 'ALE_KEY_NOT_LOADED');
      assert.match(error.message, /inside withTenant\("initech"/);
      assert.equal(await raw(9), undefined, 'nothing was written');
      let selects = 0;
      const counting = new Proxy(db, {
        get(target, p) {
          if (p === 'select') selects++;
          const v = Reflect.get(target, p, target);
          return typeof v === 'function' ? v.bind(target) : v;
        },
      });
      const shared = tenantKeys(counting, { kek: kek(), changeCheckEveryMs: 0 });
      selects = 0; // telling a database from options looked at select
      await Promise.all(Array.from({ length: 8 }, () => shared.load('initech')));
      // one read, and one more of the rows it created (their timestamps are the database's)
      assert.equal(selects, 2, 'eight concurrent loads made one read (and one read-back)');
      await Promise.all([fresh.load('initech'), tenantKeys(db, { kek: kek() }).load('initech')]);
      const stored = await keys.describe('initech');
      assert.equal(stored.length, 2, 'one data key and one index key, whoever loaded first');
    });

    test('v1 values still open through the process-wide ring, and convertToTenantKeys moves them (and their indexes) under the tenant key, idempotently', async () => {
      await mod.withTenant('acme', () =>
        db.insert(t.plainNotes).values([
          { id: 1, tenantId: 'acme', body: 'old one', bodyIndex: 'old one', meta: { v: 1 } },
          { id: 2, tenantId: 'acme', body: 'old two', bodyIndex: 'old two', meta: null },
        ]),
      );
      await mod.withTenant('globex', () => db.insert(t.plainNotes).values([{ id: 3, tenantId: 'globex', body: 'old three', bodyIndex: 'old three', meta: { v: 3 } }]));
      assert.ok((await raw(1)).startsWith('v1:'));
      assert.deepEqual((await read('acme')).map((r) => [r.body, r.meta]), [['old one', { v: 1 }], ['old two', null]]);
      // during the conversion, a lookup matches the old index too
      const match = () => keys.withTenant('acme', () => db.select({ id: t.notes.id }).from(t.notes).where(mod.matchBlindIndex(t.notes.bodyIndex, 'old two')));
      assert.deepEqual(await match(), [{ id: 2 }]);
      const options = {
        table: t.notes,
        key: t.notes.id,
        tenant: { column: t.notes.tenantId },
        keys,
        columns: [{ column: t.notes.body }, { column: t.notes.meta }],
        indexes: [{ index: t.notes.bodyIndex, source: t.notes.body }],
        batchSize: 2,
      };
      const first = await mod.convertToTenantKeys(db, options);
      assert.equal(first.scanned, 3);
      assert.equal(first.written, 8, '3 bodies, 2 metas, 3 indexes');
      const again = await mod.convertToTenantKeys(db, options);
      assert.equal(again.written, 0);
      const acmeKey = (await keys.describe('acme')).find((k) => k.purpose === 'data').keyId;
      assert.ok((await raw(1)).startsWith(`v2:${acmeKey}:`));
      assert.deepEqual((await read('acme')).map((r) => [r.body, r.meta]), [['old one', { v: 1 }], ['old two', null]]);
      assert.deepEqual((await read('globex')).map((r) => r.body), ['old three']);
      assert.deepEqual(await match(), [{ id: 2 }]);
      const [idx] = await conn.query('SELECT body_index AS v FROM tk_notes WHERE id = 2');
      assert.equal(idx.v.trim(), keys.sealer.blindIndex('old two', 'acme', 'notes', 'body'));
    });

    test("before conversion, a lookup matches a v1-era index written under a previous process-wide secret (ENCRYPTION_KEY_PREVIOUS's)", async () => {
      try {
        ale.initKeyRing([OLD_SECRET]);
        await mod.withTenant('acme', () => db.insert(t.plainNotes).values([{ id: 1, tenantId: 'acme', body: 'older', bodyIndex: 'older' }]));
        ale.initKeyRing([SECRET, OLD_SECRET]);
        const found = await keys.withTenant('acme', () => db.select({ id: t.notes.id }).from(t.notes).where(mod.matchBlindIndex(t.notes.bodyIndex, 'older')));
        assert.deepEqual(found, [{ id: 1 }]);
      } finally {
        ale.initKeyRing([SECRET]);
      }
    });

    test('every batch operation on a keys column seals under the tenant key or refuses naming convertToTenantKeys: after a shred, no stored value opens with the process-wide key', async () => {
      const staticRing = new ale.KeyRing([SECRET]);
      const plain = (id, tenant, body) => db.insert(t.notes).values({ id, tenantId: tenant, body: sql`${body}`, meta: sql`${Buffer.from(JSON.stringify({ id }))}` });
      await plain(1, 'acme', 'plain one');
      await plain(2, 'acme', 'plain two');
      await plain(3, 'globex', 'plain three');
      const base = { table: t.notes, key: t.notes.id, tenant: { column: t.notes.tenantId }, batchSize: 2 };
      const columns = [{ column: t.notes.body }, { column: t.notes.meta }];
      // a ring in place of the column's own is refused before anything is written
      const withRing = await codeOf(() => mod.migratePlaintext(db, { ...base, columns, keyRing: staticRing }));
      assert.equal(withRing, 'ALE_INVALID_INPUT');
      assert.equal(await raw(1), 'plain one');
      const p = await mod.migratePlaintext(db, { ...base, columns });
      assert.equal(p.written, 6);
      const acmeKey = keys.activeKeyId('acme');
      assert.ok((await raw(1)).startsWith(`v2:${acmeKey}:`), await raw(1));
      assert.equal(Buffer.from(await raw(1, 'meta'))[0], 2, 'a binary v2 envelope');
      assert.deepEqual((await read('acme')).map((r) => [r.body, r.meta]), [['plain one', { id: 1 }], ['plain two', { id: 2 }]]);
      const rotate = await mod.rotateKeys(db, { ...base, columns, keyRing: staticRing }).catch((e) => e);
      assert.equal(rotate?.code, 'ALE_INVALID_INPUT');
      assert.match(rotate.message, /convertToTenantKeys/);
      // convertStorage: the body moved into a binary column (the meta column, declared as text of notes.body) stays under the tenant key
      const asBinary = d.builders.table('tk_notes', {
        id: d.builders.int('id').primaryKey(),
        tenantId: d.builders.text('tenant_id').notNull(),
        body: mod.encryptedText('body', { collection: 'notes', keys }),
        bodyBin: mod.encryptedText('meta', { collection: 'notes', field: 'body', keys, storage: 'binary' }),
      });
      await db.update(asBinary).set({ bodyBin: null });
      const moved = await mod.convertStorage(db, { table: asBinary, key: asBinary.id, columns: [{ from: asBinary.body, to: asBinary.bodyBin }] });
      assert.equal(moved.written, 3);
      assert.deepEqual(await keys.withTenant('acme', () => db.select({ b: asBinary.bodyBin }).from(asBinary).where(eq(asBinary.tenantId, 'acme')).orderBy(asBinary.id)), [{ b: 'plain one' }, { b: 'plain two' }]);
      // a v1 value bound for a keys column is refused, naming the conversion
      await db.update(asBinary).set({ body: sql`${staticRing.encrypt('old', 'acme', 'notes', 'body')}`, bodyBin: null }).where(eq(asBinary.id, 1));
      const v1 = await mod.convertStorage(db, { table: asBinary, key: asBinary.id, columns: [{ from: asBinary.body, to: asBinary.bodyBin }] }).catch((e) => e);
      assert.equal(v1?.code, 'ALE_INVALID_INPUT');
      assert.match(v1.message, /convertToTenantKeys/);
      const converted = await mod.convertToTenantKeys(db, { ...base, keys, columns: [{ column: t.notes.body }] });
      assert.equal(converted.written, 1);
      await mod.convertStorage(db, { table: asBinary, key: asBinary.id, columns: [{ from: asBinary.body, to: asBinary.bodyBin }] });
      await keys.shred('acme');
      const cells = await conn.query("SELECT body, meta FROM tk_notes WHERE tenant_id = 'acme'");
      let checked = 0;
      for (const row of cells) {
        for (const v of [row.body, row.meta]) {
          if (v === null) continue;
          checked++;
          const opened = typeof v === 'string' ? () => staticRing.decrypt(v, 'acme', 'notes', 'body') : () => staticRing.decryptBinary(Buffer.from(v), 'acme', 'notes', 'body');
          assert.notEqual(await codeOf(opened), 'no error', 'a value of the shredded tenant opens with the process-wide key');
        }
      }
      assert.equal(checked, 2);
      assert.equal(await codeOf(() => read('acme')), 'ALE_KEY_SHREDDED');
    });

    test('readV1: false refuses v1 values in keys columns with ALE_UNSUPPORTED_VERSION, and their v1-era indexes no longer match; the default reads them', async () => {
      await mod.withTenant('acme', () => db.insert(t.plainNotes).values([{ id: 1, tenantId: 'acme', body: 'old one', bodyIndex: 'old one', meta: { v: 1 } }]));
      const strict = tenantKeys(db, { kek: kek(), changeCheckEveryMs: 0, readV1: false });
      const strictNotes = defineKeyedTables(mod, d.builders, strict).notes;
      const readWith = (store, table) => store.withTenant('acme', () => db.select({ body: table.body }).from(table).where(eq(table.id, 1)));
      assert.deepEqual(await readWith(keys, t.notes), [{ body: 'old one' }], 'the default reads v1');
      const e = await readWith(strict, strictNotes).catch((e) => e);
      assert.equal(e?.code, 'ALE_UNSUPPORTED_VERSION');
      assert.match(e.message, /convertToTenantKeys/);
      const find = (store, table) => store.withTenant('acme', () => db.select({ id: table.id }).from(table).where(mod.matchBlindIndex(table.bodyIndex, 'old one')));
      assert.deepEqual(await find(keys, t.notes), [{ id: 1 }]);
      assert.deepEqual(await find(strict, strictNotes), []);
      assert.equal(await codeOf(() => tenantKeys(db, { kek: kek(), readV1: 'no' })), 'ALE_INVALID_INPUT');
      // once converted, the strict store reads the row
      await mod.convertToTenantKeys(db, { table: t.notes, key: t.notes.id, tenant: 'acme', keys, columns: [{ column: t.notes.body }] });
      assert.deepEqual(await readWith(strict, strictNotes), [{ body: 'old one' }]);
    });

    test('a store declared with no database and no KEK (a schema module) works once bound at start-up, and says ALE_NOT_INITIALIZED until then', async () => {
      const declared = tenantKeys({ table: 'ale_keys' });
      const alsoDeclared = tenantKeys(db, { kek: undefined }); // an unset secret at import: no throw
      const notes = defineKeyedTables(mod, d.builders, declared).notes;
      assert.equal(declared.bound, false);
      for (const op of [() => declared.load('acme'), () => declared.describe('acme'), () => alsoDeclared.load('acme'), () => declared.kekId]) {
        const e = await (async () => op())().catch((e) => e);
        assert.equal(e?.code, 'ALE_NOT_INITIALIZED', String(e));
        assert.match(e.message, /keys\.bind\(db, \{ kek \}\)/);
      }
      assert.equal(await codeOf(() => declared.bind({ not: 'a database' })), 'ALE_INVALID_INPUT');
      declared.bind(db, { kek: kek() });
      alsoDeclared.bind(undefined, { kek: kek() });
      assert.equal(declared.bound, true);
      assert.equal(await codeOf(() => declared.bind(db, { kek: kek() })), 'ALE_INVALID_INPUT', 'a second KEK is refused');
      await declared.withTenant('acme', () => db.insert(notes).values({ id: 1, tenantId: 'acme', body: 'bound later', bodyIndex: 'bound later' }));
      assert.ok((await raw(1)).startsWith('v2:'));
      assert.deepEqual(await alsoDeclared.withTenant('acme', () => db.select({ body: defineKeyedTables(mod, d.builders, alsoDeclared).notes.body }).from(t.notes)), [{ body: 'bound later' }]);
    });

    test('operators: describe() shows counts not flushed yet, tenants() pages through the table, destroyRetired() destroys decrypt-only keys only once no value needs them', async () => {
      await insert('acme', [{ id: 1, body: 'first' }]);
      const [data] = (await keys.describe('acme')).filter((k) => k.purpose === 'data');
      assert.equal(data.encryptions, 0);
      assert.equal(data.pending, 1, 'the body; the meta column is NULL');
      await keys.flush();
      const [flushed] = (await keys.describe('acme')).filter((k) => k.purpose === 'data');
      assert.deepEqual([flushed.encryptions, flushed.pending], [1, 0]);
      await keys.rotate('acme');
      await insert('acme', [{ id: 2, body: 'second' }]);
      const uses = [{ table: t.notes, columns: [t.notes.body, t.notes.meta] }];
      // a key retired moments ago may still be getting values from processes that have not seen it retired: it waits
      assert.deepEqual(await keys.destroyRetired('acme', uses), { destroyed: [], waiting: [data.keyId] });
      // stamps only move up, so a row touched twice in one millisecond is stamped a little ahead of the clock: let it pass
      await new Promise((r) => setTimeout(r, 20));
      const refused = await keys.destroyRetired('acme', uses, { retiredForMs: 0 }).catch((e) => e);
      assert.equal(refused?.code, 'ALE_KEY_IN_USE');
      assert.match(refused.message, /1 value\(s\) in column "body" are still under a decrypt-only key of tenant "acme"/);
      assert.deepEqual((await keys.describe('acme')).map((k) => k.state).sort(), ['active', 'active', 'decrypt-only'], 'nothing destroyed');
      assert.equal(await codeOf(() => keys.destroyRetired('acme', [])), 'ALE_INVALID_INPUT');
      assert.equal(await codeOf(() => keys.destroyRetired('acme', [{ ...uses[0], columns: [t.notes.tenantId] }])), 'ALE_INVALID_INPUT');
      await mod.convertToTenantKeys(db, { table: t.notes, key: t.notes.id, tenant: { column: t.notes.tenantId }, keys, columns: [{ column: t.notes.body }, { column: t.notes.meta }] });
      const { destroyed } = await keys.destroyRetired('acme', uses, { retiredForMs: 0 });
      assert.deepEqual(destroyed, [data.keyId]);
      const after = await keys.describe('acme');
      assert.equal(after.find((k) => k.keyId === data.keyId).state, 'destroyed');
      assert.deepEqual((await read('acme')).map((r) => r.body), ['first', 'second']);
      // another process reads the tenant without the destroyed key
      const other = tenantKeys(db, { kek: kek(), changeCheckEveryMs: 0 });
      assert.deepEqual((await other.withTenant('acme', () => db.select({ body: t.notes.body }).from(t.notes).orderBy(t.notes.id))).map((r) => r.body), ['first', 'second']);
      assert.deepEqual(await keys.destroyRetired('acme', uses, { retiredForMs: 0 }), { destroyed: [], waiting: [] });
      // tenants(), page by page
      for (const tenant of ['b-tenant', 'c-tenant', 'd-tenant']) await keys.load(tenant);
      await keys.shred('c-tenant');
      const seen = [];
      for (let page = await keys.tenants({ limit: 2 }); ; page = await keys.tenants({ after: page.next, limit: 2 })) {
        seen.push(...page.tenants);
        if (page.next === undefined) break;
      }
      assert.deepEqual(seen, [
        { tenant: 'acme', shredded: false },
        { tenant: 'b-tenant', shredded: false },
        { tenant: 'c-tenant', shredded: true },
        { tenant: 'd-tenant', shredded: false },
      ]);
      assert.equal(await codeOf(() => keys.tenants({ limit: 0 })), 'ALE_INVALID_INPUT');
    });

    test('rotate: a new active key, the old one decrypt-only; old values open, new ones use the new key, the conversion moves the rest', async () => {
      await insert('acme', [{ id: 1, body: 'before', meta: { a: 1 } }]);
      const before = (await keys.describe('acme')).find((k) => k.purpose === 'data');
      const { keyId } = await keys.rotate('acme');
      assert.notEqual(keyId, before.keyId);
      const data = (await keys.describe('acme')).filter((k) => k.purpose === 'data');
      assert.deepEqual(
        data.map((k) => [k.generation, k.state]),
        [
          [1, 'decrypt-only'],
          [2, 'active'],
        ],
      );
      await insert('acme', [{ id: 2, body: 'after', meta: null }]);
      assert.ok((await raw(1)).startsWith(`v2:${before.keyId}:`));
      assert.ok((await raw(2)).startsWith(`v2:${keyId}:`));
      assert.deepEqual((await read('acme')).map((r) => r.body), ['before', 'after']);
      // the index key does not rotate: lookups keep matching
      const found = await keys.withTenant('acme', () => db.select({ id: t.notes.id }).from(t.notes).where(eq(t.notes.bodyIndex, 'before')));
      assert.deepEqual(found, [{ id: 1 }]);
      const done = await mod.convertToTenantKeys(db, { table: t.notes, key: t.notes.id, tenant: { column: t.notes.tenantId }, keys, columns: [{ column: t.notes.body }, { column: t.notes.meta }] });
      assert.equal(done.written, 2);
      assert.ok((await raw(1)).startsWith(`v2:${keyId}:`));
      assert.deepEqual((await read('acme')).map((r) => [r.body, r.meta]), [['before', { a: 1 }], ['after', null]]);
    });

    test('shred: values fail with ALE_KEY_SHREDDED, lookups find nothing, the rows hold no key, other tenants are untouched; a never-used tenant gets a tombstone', async () => {
      await insert('acme', [{ id: 1, body: 'secret plans', meta: { x: 1 } }]);
      await insert('globex', [{ id: 2, body: 'globex plans', meta: null }]);
      await keys.shred('acme');
      assert.equal(await codeOf(() => read('acme')), 'ALE_KEY_SHREDDED');
      assert.equal(await codeOf(() => insert('acme', [{ id: 5, body: 'new' }])), 'ALE_KEY_SHREDDED');
      const found = await keys.withTenant('acme', () => db.select({ id: t.notes.id }).from(t.notes).where(eq(t.notes.bodyIndex, 'secret plans')));
      assert.deepEqual(found, []);
      const rows = await keys.describe('acme');
      assert.ok(rows.length === 2 && rows.every((k) => k.state === 'shredded' && k.kek === null));
      const stored = await db.select().from(mod.aleKeys).where(eq(mod.aleKeys.tenant, 'acme'));
      assert.ok(stored.every((r) => r.wrappedKey === null));
      assert.deepEqual((await read('globex')).map((r) => r.body), ['globex plans']);
      // another store, as a restarted process: acme stays shredded, and loading does not bring keys back
      const restarted = tenantKeys(db, { kek: kek(), changeCheckEveryMs: 0 });
      await restarted.load('acme');
      assert.equal(restarted.isShredded('acme'), true);
      assert.equal(await codeOf(() => restarted.withTenant('acme', () => restarted.sealer.decrypt('v1:x', 'acme', 'notes', 'body'))), 'ALE_KEY_SHREDDED');
      assert.equal((await keys.describe('acme')).length, 2);
      // never used: a tombstone, and a later load finds it
      await keys.shred('hooli');
      await restarted.load('hooli');
      assert.equal(restarted.isShredded('hooli'), true);
      assert.ok((await keys.describe('hooli')).every((k) => k.state === 'shredded'));
    });

    test('rewrap: one row per key moves under the new KEK; data rows untouched; a store with only the new KEK opens everything, one with only the old none', async () => {
      await insert('acme', [{ id: 1, body: 'kept', meta: null }]);
      await keys.rotate('acme');
      await insert('globex', [{ id: 2, body: 'kept too', meta: null }]);
      const dataBefore = await conn.query('SELECT id, body FROM tk_notes ORDER BY id');
      const before = await db.select().from(mod.aleKeys);
      const result = await keys.rewrap(newKek());
      assert.deepEqual(result, { rewrapped: before.length, skipped: 0 });
      assert.deepEqual(await keys.rewrap(newKek()), { rewrapped: 0, skipped: before.length });
      const after = await db.select().from(mod.aleKeys);
      for (const row of after) {
        const old = before.find((r) => r.keyId === row.keyId);
        assert.notEqual(row.wrappedKey, old.wrappedKey);
        assert.notEqual(row.kek, old.kek);
      }
      assert.deepEqual(await conn.query('SELECT id, body FROM tk_notes ORDER BY id'), dataBefore);
      const onlyNew = tenantKeys(db, { kek: newKek(), changeCheckEveryMs: 0 });
      const table = defineKeyedTables(mod, d.builders, onlyNew).notes;
      const bodies = await onlyNew.withTenant('acme', () => db.select({ body: table.body }).from(table).where(eq(table.tenantId, 'acme')));
      assert.deepEqual(bodies, [{ body: 'kept' }]);
      const onlyOld = tenantKeys(db, { kek: kek(), changeCheckEveryMs: 0 });
      assert.equal(await codeOf(() => onlyOld.load('globex')), 'ALE_INVALID_KEY');
      // the old store, given [new, old], still wraps new tenants under the new KEK
      await keys.load('newco');
      assert.equal((await keys.describe('newco'))[0].kek, onlyNew.kekId);
    });

    test('a rewrap that fails part way: the store opens the keys it moved, still wraps new keys under its KEK, and a rerun finishes', async () => {
      const tenants = ['acme', 'globex', 'initech'];
      for (const tenant of tenants) await keys.load(tenant);
      const given = keys.kekId;
      let wraps = 0;
      const down = () => Promise.reject(Object.assign(new Error('the new KEK is down'), { code: 'ALE_KEK_UNAVAILABLE' }));
      const failing = kekWith(specs.next, (inner) => ({ wrap: (...a) => (++wraps > 3 ? down() : inner.wrap(...a)) }));
      assert.equal(await codeOf(() => keys.rewrap(failing)), 'ALE_KEK_UNAVAILABLE');
      const moved = (await db.select().from(mod.aleKeys)).filter((r) => r.kek === failing.id);
      assert.equal(moved.length, 3, 'three keys moved before the new KEK failed');
      // Read again from the key table, every tenant opens: the moved keys too.
      for (const tenant of tenants) {
        keys.forget(tenant);
        await keys.load(tenant);
        assert.equal(keys.sealer.decrypt(keys.sealer.encrypt('x', tenant, 'notes', 'body'), tenant, 'notes', 'body'), 'x', tenant);
      }
      await keys.load('newco');
      assert.equal((await keys.describe('newco'))[0].kek, given, 'new keys under the KEK the store was given');
      assert.equal(keys.kekId, given);
      const all = (await db.select().from(mod.aleKeys)).length;
      assert.deepEqual(await keys.rewrap(newKek()), { rewrapped: all - 3, skipped: 3 });
    });

    test('a rewrap that a close() overtakes leaves the store closed, and bind() gives it a KEK again', async () => {
      await conn.query('DROP TABLE IF EXISTS close_keys');
      const store = tenantKeys(db, { kek: kek(), table: 'close_keys', changeCheckEveryMs: 0, flushEveryMs: 0 });
      await store.ready();
      await store.load('acme'); // two keys: its data key and its index key
      let wraps = 0;
      let atLast;
      const reached = new Promise((r) => (atLast = r));
      let release;
      const held = new Promise((r) => (release = r));
      const slow = kekWith(specs.next, (inner) => ({ wrap: async (...a) => (++wraps === 2 && (atLast(), await held), inner.wrap(...a)) }));
      const run = store.rewrap(slow).then(() => 'done', (e) => e.code);
      await reached;
      await store.close();
      release();
      assert.equal(await run, 'done');
      assert.equal(store.bound, false);
      store.bind(db, { kek: newKek() });
      await store.load('acme');
      await store.close();
      await conn.query('DROP TABLE close_keys');
    });

    test('a rewrap to a KEK with the id of this one at another address is refused before any row: its keys would count as moved', async () => {
      await keys.load('acme');
      const before = await db.select().from(mod.aleKeys);
      const elsewhere = kekWith(specs.next, (inner) => ({ id: keys.kekId, holds: (ref) => ref === keys.kekId, location: 'https://other-cluster.example:8200', unwrap: (w, ref, ...a) => inner.unwrap(w, inner.id, ...a) }));
      assert.equal(await codeOf(() => keys.rewrap(elsewhere)), 'ALE_INVALID_KEY');
      assert.deepEqual(await db.select().from(mod.aleKeys), before);
      assert.equal(await codeOf(() => mod.tenantKeys(db, { kek: [kek(), elsewhere] })), 'ALE_INVALID_KEY', 'a ring of the two too');
      keys.forget('acme');
      await keys.load('acme');
    });

    test('a first load that a forced re-read overtakes (a rotation in the same process) waits for it: the work it runs has keys', async () => {
      await keys.load('acme');
      const slowKek = kekWith(specs.current, (inner) => ({ unwrap: async (...a) => (await new Promise((r) => setTimeout(r, 20)), inner.unwrap(...a)) }));
      const slow = tenantKeys(db, { kek: slowKek, changeCheckEveryMs: 0 });
      const [sealed, { keyId }] = await Promise.all([slow.withTenant('acme', () => slow.sealer.encrypt('x', 'acme', 'notes', 'body')), slow.rotate('acme')]);
      assert.ok(sealed.startsWith('v2:'), sealed);
      assert.equal(slow.sealer.decrypt(sealed, 'acme', 'notes', 'body'), 'x');
      assert.equal(slow.activeKeyId('acme'), keyId);
    });

    test('a wrapped key copied to another row does not open', async () => {
      await keys.load('acme');
      await keys.load('globex');
      const [a] = await db.select().from(mod.aleKeys).where(and(eq(mod.aleKeys.tenant, 'acme'), eq(mod.aleKeys.purpose, 'data')));
      await db.update(mod.aleKeys).set({ wrappedKey: a.wrappedKey }).where(eq(mod.aleKeys.tenant, 'globex'));
      const other = tenantKeys(db, { kek: kek(), changeCheckEveryMs: 0 });
      assert.equal(await codeOf(() => other.load('globex')), 'ALE_AUTH_FAILED');
    });

    test('a local KEK: a wrapped key cut short or emptied is ALE_AUTH_FAILED to load and to rewrap, as an altered one is', { skip: typeof specs.current !== 'string' }, async () => {
      for (const damaged of ['', 'AAAAAAAAAAAAAAAAAAAA']) {
        await keys.load('acme');
        await db.update(mod.aleKeys).set({ wrappedKey: damaged }).where(and(eq(mod.aleKeys.tenant, 'acme'), eq(mod.aleKeys.purpose, 'data')));
        const other = tenantKeys(db, { kek: kek(), changeCheckEveryMs: 0 });
        assert.equal(await codeOf(() => other.load('acme')), 'ALE_AUTH_FAILED', JSON.stringify(damaged));
        assert.equal(await codeOf(() => other.rewrap(newKek())), 'ALE_AUTH_FAILED', JSON.stringify(damaged));
        await conn.query("DELETE FROM ale_keys WHERE tenant = 'acme'");
        keys.forget('acme');
      }
    });

    test('tenant ids are compared exactly: ids that differ in case or trailing space have keys of their own, and a shred takes one of them only', async () => {
      for (const tenant of ['acme', 'Acme', 'acme ']) await insert(tenant, [{ id: tenant === 'acme' ? 1 : tenant === 'Acme' ? 2 : 3, body: `body of ${JSON.stringify(tenant)}` }]);
      const ids = await Promise.all(['acme', 'Acme', 'acme '].map(async (t) => (await keys.describe(t)).map((k) => k.keyId).sort().join()));
      assert.equal(new Set(ids).size, 3, 'three sets of keys');
      await keys.shred('Acme');
      // by id: the data table's own tenant_id column may compare ids loosely (MySQL's default collation)
      const byId = (tenant, id) => keys.withTenant(tenant, () => db.select({ body: t.notes.body }).from(t.notes).where(eq(t.notes.id, id)));
      assert.deepEqual(await byId('acme', 1), [{ body: 'body of "acme"' }]);
      assert.deepEqual(await byId('acme ', 3), [{ body: 'body of "acme "' }]);
      assert.equal(await codeOf(() => byId('Acme', 2)), 'ALE_KEY_SHREDDED');
      const fresh = tenantKeys(db, { kek: kek(), changeCheckEveryMs: 0 });
      await fresh.load('acme');
      assert.equal(fresh.isShredded('acme'), false);
    });

    test('a tenant id with a lone surrogate is refused with ALE_INVALID_CONTEXT before any query: it cannot alias the tenant whose id has U+FFFD there', async () => {
      await insert('victim\uFFFD', [{ id: 1, body: 'the victim\'s' }]);
      const before = await keys.describe('victim\uFFFD');
      const other = tenantKeys(db, { kek: kek(), changeCheckEveryMs: 0 });
      for (const id of ['victim\uD800', 'victim\uDC00', '\uD800']) {
        for (const [what, op] of [['describe', () => other.describe(id)], ['load', () => other.load(id)], ['shred', () => other.shred(id)], ['rotate', () => other.rotate(id)], ['withTenant', () => other.withTenant(id, () => 1)]]) {
          assert.equal(await codeOf(op), 'ALE_INVALID_CONTEXT', `${what}(${JSON.stringify(id)})`);
        }
        assert.equal(await codeOf(() => mod.withTenant(id, () => 1)), 'ALE_INVALID_CONTEXT', 'the free withTenant');
      }
      assert.deepEqual(await keys.describe('victim\uFFFD'), before, "the victim's keys are as they were");
      assert.deepEqual(await keys.withTenant('victim\uFFFD', () => db.select({ body: t.notes.body }).from(t.notes).where(eq(t.notes.id, 1))), [{ body: "the victim's" }]);
      // a well-formed pair is an ordinary id
      await other.load('emoji\uD83D\uDE00');
    });

    test("a value of another tenant read in this tenant's scope is ALE_AUTH_FAILED, and 50 such reads do not make 50 re-reads of the tenant's keys", async () => {
      let unwraps = 0;
      const local = mod.localKek(KEK);
      const counting = { id: local.id, holds: (r) => local.holds(r), wrap: (...a) => local.wrap(...a), unwrap: (...a) => (unwraps++, local.unwrap(...a)) };
      const store = tenantKeys(db, { kek: counting, changeCheckEveryMs: 0 });
      const notes = defineKeyedTables(mod, d.builders, store).notes;
      await store.withTenant('globex', () => db.insert(notes).values({ id: 1, tenantId: 'globex', body: "globex's" }));
      await store.load('acme');
      const before = unwraps;
      const codes = new Set();
      for (let i = 0; i < 50; i++) {
        codes.add(await codeOf(() => store.withTenant('acme', () => db.select({ body: notes.body }).from(notes).where(eq(notes.id, 1)))));
      }
      assert.deepEqual([...codes], ['ALE_AUTH_FAILED']);
      // one re-read of acme's two keys, not one per read
      assert.ok(unwraps - before <= 2, `${unwraps - before} unwraps`);
    });

    test('a shred wins over a load that was reading when it happened', async () => {
      await insert('acme', [{ id: 1, body: 'x' }]);
      const other = tenantKeys(db, { kek: kek(), changeCheckEveryMs: 0 });
      const loading = other.load('acme'); // reads the rows now, unwraps after
      await other.shred('acme');
      await loading;
      assert.equal(other.isShredded('acme'), true);
      assert.equal(await codeOf(() => other.withTenant('acme', () => other.sealer.encrypt('x', 'acme', 'notes', 'body'))), 'ALE_KEY_SHREDDED');
    });

    test('a shred that comes while a rotation is wrapping its new key takes that key too: the rotation fails with ALE_KEY_SHREDDED and no row of the tenant holds a key', async () => {
      await insert('acme', [{ id: 1, body: 'x' }]);
      let entered;
      const wrapping = new Promise((r) => (entered = r));
      let release;
      const gate = new Promise((r) => (release = r));
      const rotating = tenantKeys(db, { kek: kekWith(specs.current, (inner) => ({ wrap: async (...a) => (entered(), await gate, inner.wrap(...a)) })), changeCheckEveryMs: 0 });
      await rotating.load('acme');
      const rotation = rotating.rotate('acme').then(() => null, (e) => e);
      await Promise.race([wrapping, rotation]); // a rotation that fails before it wraps does not hang the test
      await keys.shred('acme');
      release();
      assert.equal((await rotation)?.code, 'ALE_KEY_SHREDDED');
      const rows = await db.select().from(mod.aleKeys).where(eq(mod.aleKeys.tenant, 'acme'));
      assert.deepEqual(
        rows.map((r) => [r.purpose, Number(r.generation), r.state, r.wrappedKey, r.kek]).sort(),
        [['data', 1, 'shredded', null, null], ['data', 2, 'shredded', null, null], ['index', 1, 'shredded', null, null]],
      );
      assert.equal(rotating.isShredded('acme'), true);
    });

    test("rewrap counts the keys it moved: a key shredded while it was being re-wrapped is not counted", async () => {
      await keys.load('acme');
      await keys.load('globex');
      let shredding;
      const next = kekWith(specs.next, (inner) => ({ wrap: async (key, aad, tenant) => (tenant === 'acme' && (await (shredding ??= keys.shred('acme'))), inner.wrap(key, aad, tenant)) }));
      assert.deepEqual(await keys.rewrap(next), { rewrapped: 2, skipped: 0 });
      assert.deepEqual(await keys.rewrap(next), { rewrapped: 0, skipped: 2 });
      const rows = await db.select().from(mod.aleKeys);
      assert.deepEqual(rows.map((r) => [r.tenant, r.wrappedKey === null, r.kek === null ? null : r.kek === next.id]).sort(), [['acme', true, null], ['acme', true, null], ['globex', false, true], ['globex', false, true]]);
    });

    test("destroyRetired looks at every row: a value under the tenant's retired key in a row that names another tenant keeps the key", async () => {
      // sealed under the scope's tenant, acme, whatever the row's tenant column says
      await keys.withTenant('acme', () => db.insert(t.notes).values({ id: 7, tenantId: 'globex', body: 'misfiled' }));
      await keys.rotate('acme');
      await new Promise((r) => setTimeout(r, 20)); // stamps only move up: let the retirement's pass
      const uses = [{ table: t.notes, columns: [t.notes.body, t.notes.meta] }];
      assert.equal(await codeOf(() => keys.destroyRetired('acme', uses, { retiredForMs: 0 })), 'ALE_KEY_IN_USE');
      assert.deepEqual((await keys.describe('acme')).map((k) => k.state).sort(), ['active', 'active', 'decrypt-only'], 'nothing destroyed');
    });

    test('a process that has not read its keys again for more than 90 s seals nothing under them, since another may have retired and destroyed the active one meanwhile; it seals again once it has', async () => {
      await insert('acme', [{ id: 1, body: 'before' }]);
      // An idle process: it read acme's keys, and runs its columns without load() (a fixed tenant).
      const idle = tenantKeys(db, { kek: kek(), changeCheckEveryMs: 0 });
      await idle.load('acme');
      assert.ok(idle.sealer.encrypt('x', 'acme', 'notes', 'body').startsWith('v2:'));
      // elsewhere: a rotation, the values moved, the old key destroyed
      const { keyId } = await keys.rotate('acme');
      await mod.convertToTenantKeys(db, { table: t.notes, key: t.notes.id, tenant: { column: t.notes.tenantId }, keys, columns: [{ column: t.notes.body }] });
      await new Promise((r) => setTimeout(r, 20)); // stamps only move up: let the retirement's pass
      const uses = [{ table: t.notes, columns: [t.notes.body, t.notes.meta] }];
      assert.equal((await keys.destroyRetired('acme', uses, { retiredForMs: 0 })).destroyed.length, 1);
      // 100 s later by the idle process's clock (destroyRetired's own default waits 120 s)
      const realNow = Date.now;
      Date.now = () => realNow() + 100_000;
      try {
        await new Promise((r) => setTimeout(r, 250)); // the store's clock ticks every 100 ms
        const refused = (() => {
          try {
            return idle.sealer.encrypt('y', 'acme', 'notes', 'body');
          } catch (e) {
            return e;
          }
        })();
        assert.equal(refused?.code, 'ALE_KEY_NOT_LOADED', `sealed: ${refused}`);
        assert.match(refused.message, /last read from the key table 10\d s ago/);
        // the re-read it started comes back with the new active key
        const sealedUnder = () => {
          try {
            return idle.sealer.encrypt('z', 'acme', 'notes', 'body').split(':')[1];
          } catch {
            return null;
          }
        };
        await eventually(sealedUnder, keyId, 'seals under the new key', true);
        assert.equal(keys.sealer.decrypt(idle.sealer.encrypt('z', 'acme', 'notes', 'body'), 'acme', 'notes', 'body'), 'z');
      } finally {
        Date.now = realNow;
        // back to the real time before the next test's stores read the clock
        await new Promise((r) => setTimeout(r, 250));
      }
    });

    test('a process that sees a rotation elsewhere but cannot unwrap the new keys seals nothing under the old active key, still opens values, and seals again once it reads them', async () => {
      await insert('acme', [{ id: 1, body: 'before' }]);
      const down = { unwrap: false };
      // A process whose columns run without load() (a fixed tenant, a long synchronous loop): its change check runs in the background.
      const other = tenantKeys(db, { kek: flakyKek(down), changeCheckEveryMs: 50 });
      await other.load('acme');
      const loading = tenantKeys(db, { kek: flakyKek(down), changeCheckEveryMs: 50 });
      await loading.load('acme');
      const sealed = other.sealer.encrypt('sealed before', 'acme', 'notes', 'body');
      down.unwrap = true;
      const { keyId } = await keys.rotate('acme');
      let code = 'no error';
      for (let i = 0; i < 100 && code === 'no error'; i++) {
        await new Promise((r) => setTimeout(r, 20));
        code = await codeOf(() => other.sealer.encrypt('after the rotation', 'acme', 'notes', 'body'));
      }
      assert.equal(code, 'ALE_KEK_UNAVAILABLE', 'sealing under the superseded key is refused');
      assert.equal(other.sealer.decrypt(sealed, 'acme', 'notes', 'body'), 'sealed before', 'values still open');
      // A process that works through withTenant, which loads first (a change check is due at each call): its loads end, and
      // the keys held are kept (docs/tenant-keys.md, "Outages").
      const opened = () => loading.withTenant('acme', () => loading.sealer.decrypt(sealed, 'acme', 'notes', 'body'));
      assert.equal(await opened(), 'sealed before', 'withTenant opens them');
      assert.equal(await codeOf(() => loading.withTenant('acme', () => loading.sealer.encrypt('y', 'acme', 'notes', 'body'))), 'ALE_KEK_UNAVAILABLE', 'and seals nothing');
      await new Promise((r) => setTimeout(r, 60));
      assert.equal(await opened(), 'sealed before', 'still held after the loads');
      down.unwrap = false;
      let again;
      for (let i = 0; i < 100 && again === undefined; i++) {
        await new Promise((r) => setTimeout(r, 20));
        try {
          again = other.sealer.encrypt('after the re-read', 'acme', 'notes', 'body');
        } catch {
          // not read yet
        }
      }
      assert.ok(again !== undefined, 'sealing resumes once the new keys are read');
      assert.ok(again.startsWith(`v2:${keyId}:`), "under the new active key");
      assert.equal(await keys.withTenant('acme', () => keys.sealer.decrypt(again, 'acme', 'notes', 'body')), 'after the re-read');
    });

    test("a KEK outage after another process rotated a tenant's key: once this process has seen it, the loads of other tenants do not wait on the key service", async () => {
      const slow = { on: false };
      const down = () => Promise.reject(Object.assign(new Error('the KEK service is down'), { code: 'ALE_KEK_UNAVAILABLE' }));
      const slowKek = kekWith(specs.current, (inner) => ({ unwrap: async (...a) => (slow.on ? (await new Promise((r) => setTimeout(r, 1200)), down()) : inner.unwrap(...a)) }));
      const other = tenantKeys(db, { kek: slowKek, changeCheckEveryMs: 30 });
      await other.load('acme');
      await other.load('globex');
      const sealedAcme = other.sealer.encrypt('acme before', 'acme', 'notes', 'body');
      slow.on = true;
      await keys.rotate('acme');
      // the first check that sees the rotation waits for its unwraps, and then seals nothing under the old key
      let code;
      for (let i = 0; i < 100 && code !== 'ALE_KEK_UNAVAILABLE'; i++) {
        await new Promise((r) => setTimeout(r, 50));
        code = await codeOf(() => other.withTenant('acme', () => other.sealer.encrypt('x', 'acme', 'notes', 'body')));
      }
      assert.equal(code, 'ALE_KEK_UNAVAILABLE', 'seal refused');
      const times = [];
      for (let i = 0; i < 5; i++) {
        await new Promise((r) => setTimeout(r, 40)); // a check is due at each load
        const started = Date.now();
        await other.load('globex');
        times.push(Date.now() - started);
      }
      assert.ok(Math.max(...times) < 600, `loads of globex took ${times.join(', ')} ms`);
      // A shred meanwhile is seen by the next load that waits for a check, not left to the re-read waiting on the service.
      assert.equal(other.sealer.decrypt(sealedAcme, 'acme', 'notes', 'body'), 'acme before', 'still opens before the shred');
      await keys.shred('acme');
      await new Promise((r) => setTimeout(r, 250)); // past a check's interval on the store's clock, which ticks every 100 ms
      await other.load('globex');
      assert.equal(await codeOf(() => other.sealer.decrypt(sealedAcme, 'acme', 'notes', 'body')), 'ALE_KEY_SHREDDED');
      slow.on = false;
    });

    test('ready() adds the encryption-count column to a key table made before it, and runs again harmlessly; flush() adds counts to it', async () => {
      await conn.query('DROP TABLE IF EXISTS upgraded_keys');
      const old = tenantKeys(db, { kek: kek(), table: 'upgraded_keys', changeCheckEveryMs: 0, flushEveryMs: 0 });
      await old.ready();
      await conn.query('ALTER TABLE upgraded_keys DROP COLUMN encryptions');
      const store = tenantKeys(db, { kek: kek(), table: 'upgraded_keys', changeCheckEveryMs: 0, flushEveryMs: 0 });
      await store.ready();
      await store.ready();
      await store.load('acme');
      for (let i = 0; i < 3; i++) store.sealer.encrypt('x', 'acme', 'notes', 'body');
      store.sealer.encryptBinary('x', 'acme', 'notes', 'body');
      store.sealer.decrypt(store.sealer.encrypt('y', 'acme', 'notes', 'body'), 'acme', 'notes', 'body');
      await store.flush();
      await store.flush();
      const counts = (await store.describe('acme')).map((k) => [k.purpose, k.encryptions]);
      assert.deepEqual(counts.sort(), [['data', 5], ['index', 0]]);
      await conn.query('DROP TABLE upgraded_keys');
    });

    test('refusals: a column of another store or none in convertToTenantKeys, a tenant id too long, a table name that is not plain lower case', async () => {
      const other = tenantKeys(db, { kek: kek() });
      const base = { table: t.notes, key: t.notes.id, tenant: { column: t.notes.tenantId } };
      assert.equal(await codeOf(() => mod.convertToTenantKeys(db, { ...base, keys: other, columns: [{ column: t.notes.body }] })), 'ALE_INVALID_INPUT');
      assert.equal(await codeOf(() => mod.convertToTenantKeys(db, { ...base, keys, columns: [{ column: t.plainNotes.body }] })), 'ALE_INVALID_INPUT');
      assert.equal(
        await codeOf(() => mod.convertToTenantKeys(db, { ...base, keys, columns: [{ column: t.notes.body }], indexes: [{ index: t.plainNotes.bodyIndex, source: t.notes.body }] })),
        'ALE_INVALID_INPUT',
      );
      assert.equal(await codeOf(() => keys.load('t'.repeat(192))), 'ALE_INVALID_CONTEXT');
      await keys.load('t'.repeat(191));
      for (const table of ['Ale_Keys', 'ale-keys', '1keys', 'x'.repeat(49)]) assert.equal(await codeOf(() => tenantKeys(db, { kek: kek(), table })), 'ALE_INVALID_INPUT', table);
      assert.equal(await codeOf(() => tenantKeys(db, { kek: 'too short' })), 'ALE_INVALID_KEY');
      // A provider's id is stored with every key it wraps (MySQL: varchar(255)); a longer one, cut to fit outside a strict sql_mode, would hold no key.
      for (const id of ['k'.repeat(256), '', undefined, 7]) assert.equal(await codeOf(() => tenantKeys(db, { kek: kekWith(specs.current, () => ({ id })) })), 'ALE_INVALID_KEY', String(id));
      // a previous KEK's id is never stored, only asked about: any length
      tenantKeys(db, { kek: [kek(), kekWith(specs.current, () => ({ id: 'k'.repeat(300) }))] });
      const longest = 'k'.repeat(255);
      const longKek = () => kekWith(specs.current, (inner) => ({ id: longest, holds: (ref) => ref === longest, unwrap: (w, ref, ...a) => inner.unwrap(w, ref === longest ? inner.id : ref, ...a) }));
      const longKeys = tenantKeys(db, { kek: longKek(), table: 'ale_keys_long_kek' });
      await longKeys.ready();
      await longKeys.load('acme');
      const again = tenantKeys(db, { kek: longKek(), table: 'ale_keys_long_kek' });
      await again.load('acme');
      assert.equal(again.activeKeyId('acme'), longKeys.activeKeyId('acme'), 'the key wrapped under the 255-character id unwraps in another store');
      await Promise.all([longKeys.close(), again.close()]);
      await conn.query('DROP TABLE ale_keys_long_kek');
      // options renamed once, before the first release: the old names are refused, naming the new
      const renamed = await (async () => tenantKeys(db, { kek: kek(), recheckAfter: 1_000 }))().catch((e) => e);
      assert.equal(renamed?.code, 'ALE_INVALID_INPUT');
      assert.match(renamed.message, /unknown option "recheckAfter"; it is called recheckAfterMs now/);
      assert.equal(await codeOf(() => tenantKeys(db, { kek: kek(), rotateAfter: 5 })), 'ALE_INVALID_INPUT');
      assert.equal(await codeOf(() => tenantKeys(db, {}).load('acme')), 'ALE_NOT_INITIALIZED', 'no KEK yet: given later with bind()');
    });

    test('the cache is bounded: past maxTenants a tenant not used since is dropped, its keys leave the ring, and it must be loaded again', async () => {
      const small = tenantKeys(db, { kek: kek(), maxTenants: 3, changeCheckEveryMs: 0 });
      for (const tenant of ['a', 'b', 'c', 'd', 'e']) await small.load(tenant);
      assert.equal(small.loadedTenants, 3);
      assert.equal(await codeOf(() => small.sealer.encrypt('x', 'a', 'notes', 'body')), 'ALE_KEY_NOT_LOADED');
      await small.load('a');
      assert.ok(small.sealer.encrypt('x', 'a', 'notes', 'body').startsWith('v2:'));
    });

    test('the sealer remembers the tenant it served last, but a forget, an eviction or a shred of that tenant is seen on its next value', async () => {
      const small = tenantKeys(db, { kek: kek(), maxTenants: 1, changeCheckEveryMs: 0 });
      const seal = (tenant) => small.sealer.encrypt('x', tenant, 'notes', 'body');
      await small.load('m1');
      assert.ok(seal('m1').startsWith('v2:') && seal('m1').startsWith('v2:'));
      small.forget('m1');
      assert.equal(await codeOf(() => seal('m1')), 'ALE_KEY_NOT_LOADED', 'forgotten');
      await small.load('m1');
      assert.ok(seal('m1').startsWith('v2:'));
      await small.load('m2'); // evicts m1
      assert.equal(await codeOf(() => seal('m1')), 'ALE_KEY_NOT_LOADED', 'evicted');
      assert.ok(seal('m2').startsWith('v2:'));
      await small.shred('m2');
      assert.equal(await codeOf(() => seal('m2')), 'ALE_KEY_SHREDDED', 'shredded');
    });

    test('a process idle since before another one shredded a tenant sees the shred on its first withTenant after the change-check interval', async () => {
      await insert('acme', [{ id: 1, body: 'x' }]);
      const idle = tenantKeys(db, { kek: kek(), changeCheckEveryMs: 200 });
      const table = defineKeyedTables(mod, d.builders, idle).notes;
      const first = () => idle.withTenant('acme', () => db.select({ body: table.body }).from(table).where(eq(table.id, 1)));
      assert.deepEqual(await first(), [{ body: 'x' }]);
      await keys.shred('acme'); // the other process
      await new Promise((r) => setTimeout(r, 400)); // nothing runs in `idle` meanwhile
      assert.equal(await codeOf(first), 'ALE_KEY_SHREDDED');
    });

    test('a shred reaches another process within the change-check bound whatever the writers\' clocks say (creator +600 s, shredder -120 s)', async () => {
      const inSkewedProcess = (action, skewMs) =>
        new Promise((resolve, reject) => {
          const env = { ...process.env, ALE_SKEWED: JSON.stringify({ ...conn.target, tenant: 'skewed', kek: specs.current, action, skewMs }) };
          const p = spawn(process.execPath, [skewed], { stdio: ['ignore', 'pipe', 'inherit'], env });
          let out = '';
          p.stdout.on('data', (d) => (out += d));
          p.on('close', (code) => (code === 0 && out.includes('done') ? resolve() : reject(new Error(`the ${action} process exited ${code}: ${out}`))));
        });
      await inSkewedProcess('load', 600_000);
      const reader = tenantKeys(db, { kek: kek(), changeCheckEveryMs: 200, flushEveryMs: 0 });
      await reader.load('skewed');
      const seal = () => reader.sealer.encrypt('x', 'skewed', 'notes', 'body');
      assert.ok(seal().startsWith('v2:'));
      await inSkewedProcess('shred', -120_000);
      const shredAt = performance.now();
      let code;
      while (performance.now() - shredAt < 10_000) {
        code = await codeOf(seal);
        if (code !== 'no error') break;
        await new Promise((r) => setTimeout(r, 20));
      }
      const seenAfter = performance.now() - shredAt;
      assert.equal(code, 'ALE_KEY_SHREDDED');
      // changeCheckEveryMs (200 ms) plus one query, with room for a busy host
      assert.ok(seenAfter < 2_000, `seen ${Math.round(seenAfter)} ms after the shred`);
    });

    test('the bound for a column used without load(): after a shred elsewhere, a synchronous loop goes on until its next await; then the background check sees it within one query and one re-read', async () => {
      await insert('acme', [{ id: 1, body: 'x' }]);
      const other = tenantKeys(db, { kek: kek(), changeCheckEveryMs: 100, flushEveryMs: 0 });
      await other.load('acme');
      const seal = () => other.sealer.encrypt('x', 'acme', 'notes', 'body');
      seal();
      await keys.shred('acme'); // the other process
      await new Promise((r) => setTimeout(r, 250)); // past the interval; nothing runs in `other` meanwhile
      // awaited calls go on during one query's round trip (on SQLite, whose queries are in process, they see it sooner)
      const started = performance.now();
      let code = 'no error';
      while (code === 'no error' && performance.now() - started < 5_000) {
        await new Promise((r) => setTimeout(r, 5));
        code = await codeOf(seal);
      }
      assert.equal(code, 'ALE_KEY_SHREDDED');
      // a synchronous loop on a fresh process state: every call until the next await goes through
      const third = tenantKeys(db, { kek: kek(), changeCheckEveryMs: 100, flushEveryMs: 0 });
      await insert('globex', [{ id: 2, body: 'y' }]);
      await third.load('globex');
      await keys.shred('globex');
      await new Promise((r) => setTimeout(r, 250));
      let sync = 0;
      for (let i = 0; i < 200; i++) {
        try {
          third.sealer.encrypt('x', 'globex', 'notes', 'body');
          sync++;
        } catch {
          break;
        }
      }
      assert.equal(sync, 200, 'a synchronous loop is not interrupted');
      const after = performance.now();
      let seen = 'no error';
      while (seen === 'no error' && performance.now() - after < 5_000) {
        await new Promise((r) => setTimeout(r, 5));
        seen = await codeOf(() => third.sealer.encrypt('x', 'globex', 'notes', 'body'));
      }
      assert.equal(seen, 'ALE_KEY_SHREDDED');
      assert.ok(performance.now() - after < 2_000, 'seen within one query and one re-read after the loop yields');
    });

    test('another process sees a rotation and a shred within the bound (recheckAfterMs, or sooner through the change check)', async () => {
      await insert('acme', [{ id: 1, body: 'watched', meta: null }]);
      const w = startWatcher(conn.target, 'acme', specs.current);
      try {
        await w.next('watching');
        const { keyId } = await keys.rotate('acme');
        const rotated = await w.next(`key ${keyId}`);
        assert.ok(rotated);
        const shredAt = Date.now();
        await keys.shred('acme');
        const line = await w.next('shredded');
        const seenAfter = Number(line.split(' ')[1]) - shredAt;
        // the watcher checks for changes every 200 ms and rechecks every 2 s
        assert.ok(seenAfter < 2_500, `seen ${seenAfter} ms after the shred`);
        assert.equal(await w.closed, 0);
      } finally {
        w.kill();
      }
    });
  });
}
