// The Drizzle integration contract, run against every dialect's real database.
// A dialect test file supplies its module, its table builders, a connected
// Drizzle `db`, and a `reset()` that (re)creates the tables. Every test starts
// from empty tables and writes the rows it reads.
import { describe, test, before, beforeEach, after } from 'node:test';
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { eq, inArray, sql } from 'drizzle-orm';
import { ale, flipBit, SECRET, OLD_SECRET } from './helpers.mjs';

/**
 * @param {object} d
 * @param {string} d.name
 * @param {any} d.mod            the '@sveltycms/ale/drizzle/<dialect>' module
 * @param {(mod: any, rings: object) => object} d.schema  returns defineTables(…)
 * @param {() => Promise<{ db: any, reset: () => Promise<void>, close: () => Promise<void> | void }>} d.connect
 */
export function drizzleSuite(d) {
  const { mod } = d;
  const newRing = new ale.KeyRing([SECRET, OLD_SECRET]);
  const oldRing = new ale.KeyRing([OLD_SECRET]);
  const t = d.schema(mod, { newRing });
  const { users, posts, legacyUsers, rotatingUsers, legacyUsersWith } = t;
  let db;
  let conn;

  const codeOf = async (promise) => {
    try {
      await promise;
    } catch (e) {
      return e.code;
    }
    return 'no error';
  };
  const raw = (table, column, id) => db.select({ v: sql`${column}` }).from(table).where(eq(table.id, id)).then((r) => r[0]?.v);
  const setRaw = (table, column, id, value) =>
    db.update(table).set({ [Object.entries(table).find(([, c]) => c === column)[0]]: sql`${value}` }).where(eq(table.id, id));
  const count = (table) => db.select({ n: sql`count(*)` }).from(table).then((r) => Number(r[0].n));

  describe(`drizzle ${d.name}`, () => {
    before(async () => {
      ale.initKeyRing([SECRET]);
      conn = await d.connect();
      db = conn.db;
    });
    beforeEach(() => conn.reset());
    after(async () => {
      await conn?.close();
    });

    test('round trip: text, JSON, and NULL stays NULL', async () => {
      const profile = { name: 'Zoë', tags: ['a', 'b'], n: 1.5, nested: { ok: true }, lone: 'a\uD800b' };
      await withTenant('t1', () => db.insert(users).values({ id: 1, tenantId: 't1', email: 'zoe@example.com', emailIndex: 'zoe@example.com', profile }));
      await withTenant('t1', () => db.insert(users).values({ id: 2, tenantId: 't1', email: null, emailIndex: null, profile: null }));
      const rows = await withTenant('t1', () => db.select().from(users).orderBy(users.id));
      assert.equal(rows[0].email, 'zoe@example.com');
      assert.deepEqual(rows[0].profile, profile);
      assert.equal(rows[1].email, null);
      assert.equal(rows[1].profile, null);
      assert.equal(await raw(users, users.email, 2), null);
    });

    test('what the database holds is a v1 envelope that the core decrypts with tenant:collection:field', async () => {
      await withTenant('t1', () => db.insert(users).values({ id: 1, tenantId: 't1', email: 'zoe@example.com' }));
      const stored = await raw(users, users.email, 1);
      assert.match(stored, /^v1:[\w-]+:[\w-]+:[\w-]+$/);
      assert.ok(ale.isEnvelope(stored));
      assert.ok(!stored.includes('zoe'));
      assert.equal(new ale.KeyRing([SECRET]).decrypt(stored, 't1', 'users', 'email'), 'zoe@example.com');
    });

    test('two tenants in one table: each reads its own rows, and only those', async () => {
      await withTenant('acme', () => db.insert(users).values({ id: 1, tenantId: 'acme', email: 'a@acme.test' }));
      await withTenant('globex', () => db.insert(users).values({ id: 2, tenantId: 'globex', email: 'b@globex.test' }));
      const acme = await withTenant('acme', () => db.select().from(users).where(eq(users.tenantId, 'acme')));
      assert.deepEqual(acme.map((r) => r.email), ['a@acme.test']);
      const globex = await withTenant('globex', () => db.select().from(users).where(eq(users.tenantId, 'globex')));
      assert.deepEqual(globex.map((r) => r.email), ['b@globex.test']);
      // reading the other tenant's row in the wrong scope fails, it never leaks
      assert.equal(await codeOf(withTenant('acme', () => db.select().from(users).where(eq(users.id, 2)))), 'ALE_AUTH_FAILED');
    });

    test('relocation: a ciphertext copied to another tenant, column or table fails with ALE_AUTH_FAILED', async () => {
      await withTenant('acme', () => db.insert(users).values({ id: 1, tenantId: 'acme', email: 'a@acme.test', profile: { x: 1 } }));
      await withTenant('globex', () => db.insert(users).values({ id: 2, tenantId: 'globex', email: 'b@globex.test' }));
      const email = await raw(users, users.email, 1);
      await setRaw(users, users.email, 2, email); // into globex's row
      assert.equal(await codeOf(withTenant('globex', () => db.select().from(users).where(eq(users.id, 2)))), 'ALE_AUTH_FAILED');
      await setRaw(users, users.profile, 1, email); // into another column
      assert.equal(await codeOf(withTenant('acme', () => db.select().from(users).where(eq(users.id, 1)))), 'ALE_AUTH_FAILED');
      await withTenant('acme', () => db.insert(posts).values({ id: 1, tenantId: 'acme', secret: 'post secret' }));
      await setRaw(posts, posts.secret, 1, email); // into another table
      assert.equal(await codeOf(withTenant('acme', () => db.select().from(posts))), 'ALE_AUTH_FAILED');
    });

    test('the error names the column and collection', async () => {
      await withTenant('acme', () => db.insert(posts).values({ id: 1, tenantId: 'acme', secret: 'post secret' }));
      await setRaw(posts, posts.secret, 1, ale.encrypt('moved', 'acme', 'users', 'email'));
      try {
        await withTenant('acme', () => db.select().from(posts));
        assert.fail('expected a failure');
      } catch (e) {
        assert.equal(e.code, 'ALE_AUTH_FAILED');
        assert.match(e.message, /column "secret".*collection "posts"/);
      }
    });

    test('bad rows: readWithFailures reports each failed cell with its row key and keeps the rest', async () => {
      await withTenant('acme', async () => {
        for (const id of [1, 2, 3]) await db.insert(users).values({ id, tenantId: 'acme', email: `u${id}@x.test`, profile: { id } });
      });
      const good = await raw(users, users.email, 1);
      await setRaw(users, users.email, 2, flipBit(good, 3, 0)); // one bit of the ciphertext changed
      await setRaw(users, users.profile, 3, 'v1:garbage'); // garbled
      const { rows, failures } = await withTenant('acme', () => mod.readWithFailures(() => db.select().from(users).orderBy(users.id), { key: 'id', table: 'users' }));
      assert.deepEqual(rows.map((r) => [r.email, r.profile]), [['u1@x.test', { id: 1 }], [null, { id: 2 }], ['u3@x.test', null]]);
      assert.deepEqual(failures.map((f) => [f.key, f.column, f.code]), [[2, 'email', 'ALE_AUTH_FAILED'], [3, 'profile', 'ALE_MALFORMED_ENVELOPE']]);
      assert.match(failures[0].message, /table "users", column "email", collection "users", row 2/);
      // without the helper, the same read fails as a whole with a coded error naming the column
      assert.equal(await codeOf(withTenant('acme', () => db.select().from(users))), 'ALE_AUTH_FAILED');
    });

    test('a lone surrogate is refused in a text column and kept exactly in a JSON column', async () => {
      assert.equal(await codeOf(withTenant('acme', () => db.insert(users).values({ id: 1, tenantId: 'acme', email: 'a\uD800b' }))), 'ALE_INVALID_INPUT');
      await withTenant('acme', () => db.insert(users).values({ id: 2, tenantId: 'acme', profile: { s: 'a\uD800b\uDFFF' } }));
      const [row] = await withTenant('acme', () => db.select().from(users));
      assert.equal(row.profile.s, 'a\uD800b\uDFFF');
      assert.equal(await count(users), 1);
    });

    test('encryptedJson: a plaintext that is not JSON fails with ALE_INVALID_JSON, and none of it reaches the message or the stack', async () => {
      const secret = '078-05-1120';
      await db.insert(users).values({ id: 1, tenantId: 'acme', profile: sql`${ale.encrypt(`ssn: ${secret}`, 'acme', 'users', 'profile')}` }); // JSON.parse would quote it
      let err;
      try {
        await withTenant('acme', () => db.select().from(users));
      } catch (e) {
        err = e;
      }
      assert.equal(err?.code, 'ALE_INVALID_JSON', String(err));
      assert.ok(err instanceof mod.AleColumnError);
      assert.match(err.message, /column "profile", collection "users"/);
      for (const text of [err.message, err.stack, inspect(err), err.cause?.message, err.cause?.stack]) assert.ok(!String(text).includes(secret), text);
      const { rows, failures } = await withTenant('acme', () => mod.readWithFailures(() => db.select().from(users), { key: 'id' }));
      assert.equal(rows[0].profile, null);
      assert.deepEqual(failures.map((f) => [f.key, f.column, f.code]), [[1, 'profile', 'ALE_INVALID_JSON']]);
      assert.ok(!failures[0].message.includes(secret));
    });

    test('encryptedJson: a value JSON cannot carry fails with ALE_INVALID_INPUT before anything is written', async () => {
      const cycle = {};
      cycle.self = cycle;
      for (const profile of [{ n: 1n }, cycle, () => 'fn']) {
        const err = await withTenant('acme', () => db.insert(users).values({ id: 1, tenantId: 'acme', profile })).then(() => null, (e) => e);
        assert.equal(err?.code, 'ALE_INVALID_INPUT', String(err));
        assert.match(err.message, /column "profile", collection "users"/);
      }
      assert.equal(await count(users), 0);
    });

    test('no tenant, no write: ALE_INVALID_CONTEXT before anything is written', async () => {
      let err = null;
      try {
        await db.insert(users).values({ id: 9, tenantId: 'x', email: 'nobody@example.com' });
      } catch (e) {
        err = e;
      }
      assert.equal(err?.code, 'ALE_INVALID_CONTEXT');
      assert.match(err.message, /withTenant/);
      assert.equal(await count(users), 0);
    });

    test('async queries keep their tenant across await, even interleaved', async () => {
      const work = (tenant, id) =>
        withTenant(tenant, async () => {
          await new Promise((r) => setTimeout(r, 5));
          await db.insert(users).values({ id, tenantId: tenant, email: `${tenant}@example.com` });
          await new Promise((r) => setTimeout(r, 5));
          const rows = await db.select().from(users).where(eq(users.id, id));
          return rows[0].email;
        });
      assert.deepEqual(await Promise.all([work('red', 1), work('blue', 2), work('green', 3)]), ['red@example.com', 'blue@example.com', 'green@example.com']);
    });

    test('blind index: where(eq(index, value)) finds the row without decrypting', async () => {
      await withTenant('acme', async () => {
        for (const [id, email] of [[1, 'a@x.test'], [2, 'b@x.test'], [3, 'c@x.test']]) {
          await db.insert(users).values({ id, tenantId: 'acme', email, emailIndex: email });
        }
        const hit = await db.select({ id: users.id }).from(users).where(eq(users.emailIndex, 'b@x.test'));
        assert.deepEqual(hit, [{ id: 2 }]);
        const miss = await db.select({ id: users.id }).from(users).where(eq(users.emailIndex, 'nobody@x.test'));
        assert.deepEqual(miss, []);
      });
      // the same value in another tenant has another index
      const other = await withTenant('globex', () => db.select({ id: users.id }).from(users).where(eq(users.emailIndex, 'b@x.test')));
      assert.deepEqual(other, []);
      assert.equal(await raw(users, users.emailIndex, 2), ale.blindIndex('b@x.test', 'acme', 'users', 'email'));
      // matchBlindIndex on the process-wide ring matches its primary key's index
      const matched = await withTenant('acme', () => db.select({ id: users.id }).from(users).where(mod.matchBlindIndex(users.emailIndex, 'c@x.test')));
      assert.deepEqual(matched, [{ id: 3 }]);
    });

    test('matchBlindIndex finds values indexed under the old key and under the new key, in the tenant scope only', async () => {
      const ctx = ['acme', 'users', 'email'];
      // row 1 was written before the rotation (its index under the old key), row 2 after it (under the new)
      await db.insert(rotatingUsers).values({ id: 1, tenantId: 'acme', email: sql`${oldRing.encrypt('old@x.test', ...ctx)}`, emailIndex: sql`${oldRing.blindIndex('old@x.test', ...ctx)}` });
      await withTenant('acme', () => db.insert(rotatingUsers).values({ id: 2, tenantId: 'acme', email: 'new@x.test', emailIndex: 'new@x.test' }));
      assert.equal(await raw(rotatingUsers, rotatingUsers.emailIndex, 2), newRing.blindIndex('new@x.test', ...ctx));
      const find = (where) => db.select({ id: rotatingUsers.id }).from(rotatingUsers).where(where).orderBy(rotatingUsers.id).then((rows) => rows.map((r) => r.id));
      await withTenant('acme', async () => {
        assert.deepEqual(await find(mod.matchBlindIndex(rotatingUsers.emailIndex, 'old@x.test')), [1]);
        assert.deepEqual(await find(mod.matchBlindIndex(rotatingUsers.emailIndex, 'new@x.test')), [2]);
        assert.deepEqual(await find(mod.matchBlindIndex(rotatingUsers.emailIndex, 'nobody@x.test')), []);
        // what the README gave before: each index goes through the column, is hashed again, and matches nothing
        assert.deepEqual(await find(inArray(rotatingUsers.emailIndex, newRing.blindIndexes('old@x.test', ...ctx))), []);
        // eq() hashes under the primary key only
        assert.deepEqual(await find(eq(rotatingUsers.emailIndex, 'old@x.test')), []);
      });
      assert.deepEqual(await withTenant('globex', () => find(mod.matchBlindIndex(rotatingUsers.emailIndex, 'old@x.test'))), []);
      assert.throws(() => mod.matchBlindIndex(rotatingUsers.emailIndex, 'old@x.test'), { code: 'ALE_INVALID_CONTEXT' });
      assert.throws(() => withTenant('acme', () => mod.matchBlindIndex(rotatingUsers.email, 'old@x.test')), { code: 'ALE_INVALID_INPUT' });
      assert.throws(() => withTenant('acme', () => mod.matchBlindIndex(rotatingUsers.id, 'old@x.test')), { code: 'ALE_INVALID_INPUT' });
    });

    test('legacy plaintext: opt-in reads and counts it; by default it is an error', async () => {
      await db.insert(legacyUsers).values({ id: 1, tenantId: 'acme', email: sql`${'old@plain.test'}` });
      await db.insert(users).values({ id: 1, tenantId: 'acme', email: sql`${'old@plain.test'}` });
      const before = mod.legacyPlaintextReads()['legacy_users.email'] ?? 0;
      const rows = await withTenant('acme', () => db.select().from(legacyUsers));
      assert.equal(rows[0].email, 'old@plain.test');
      assert.equal(mod.legacyPlaintextReads()['legacy_users.email'], before + 1);
      assert.equal(await codeOf(withTenant('acme', () => db.select().from(users))), 'ALE_MALFORMED_ENVELOPE');
    });

    test('legacy plaintext: reads and migratePlaintext use one rule (isEnvelope), so "v2: draft" is plaintext to both', async () => {
      await db.insert(legacyUsers).values({ id: 1, tenantId: 'acme', email: sql`${'v2: draft'}` });
      assert.equal(ale.isEnvelope('v2: draft'), false);
      assert.deepEqual((await withTenant('acme', () => db.select().from(legacyUsers))).map((r) => r.email), ['v2: draft']);
      const p = await mod.migratePlaintext(db, { table: legacyUsers, key: legacyUsers.id, columns: [{ column: legacyUsers.email, collection: 'legacy_users' }], tenant: 'acme' });
      assert.equal(p.written, 1);
      assert.ok(ale.isEnvelope(await raw(legacyUsers, legacyUsers.email, 1)));
      assert.deepEqual((await withTenant('acme', () => db.select().from(legacyUsers))).map((r) => r.email), ['v2: draft']);
    });

    test('legacy plaintext: one process warning ALE_LEGACY_PLAINTEXT the first time a column serves one', async () => {
      const collection = `legacy-warn-${Math.random().toString(36).slice(2)}`; // a column no other test has read
      const table = legacyUsersWith({ collection, legacyPlaintext: true });
      const warnings = [];
      const onWarning = (w) => w.message.includes(collection) && warnings.push(w);
      process.on('warning', onWarning);
      try {
        for (const id of [1, 2]) await db.insert(table).values({ id, tenantId: 'acme', email: sql`${`old${id}@plain.test`}` });
        for (let i = 0; i < 2; i++) assert.equal((await withTenant('acme', () => db.select().from(table))).length, 2);
        await new Promise((r) => setTimeout(r, 10)); // warnings are emitted on a later tick
      } finally {
        process.off('warning', onWarning);
      }
      assert.equal(mod.legacyPlaintextReads()[`${collection}.email`], 4);
      assert.deepEqual(warnings.map((w) => [w.name, w.code]), [['AleWarning', 'ALE_LEGACY_PLAINTEXT']]);
      assert.match(warnings[0].message, /column "email"/);
      assert.ok(!warnings[0].message.includes('plain.test'));
    });

    test('legacy plaintext: { until } ends the mode; later a plaintext value is ALE_MALFORMED_ENVELOPE', async () => {
      await db.insert(legacyUsers).values({ id: 1, tenantId: 'acme', email: sql`${'old@plain.test'}` });
      const open = legacyUsersWith({ collection: 'legacy_users', legacyPlaintext: { until: '2999-01-01T00:00:00Z' } });
      const ended = legacyUsersWith({ collection: 'legacy_users', legacyPlaintext: { until: new Date(Date.now() - 1000) } });
      assert.deepEqual((await withTenant('acme', () => db.select().from(open))).map((r) => r.email), ['old@plain.test']);
      assert.equal(await codeOf(withTenant('acme', () => db.select().from(ended))), 'ALE_MALFORMED_ENVELOPE');
      await withTenant('acme', () => db.insert(ended).values({ id: 2, tenantId: 'acme', email: 'new@x.test' }));
      assert.deepEqual((await withTenant('acme', () => db.select().from(ended).where(eq(ended.id, 2)))).map((r) => r.email), ['new@x.test']);
      for (const until of ['not a date', undefined]) {
        assert.throws(() => legacyUsersWith({ collection: 'legacy_users', legacyPlaintext: { until } }), { code: 'ALE_INVALID_INPUT' });
      }
    });

    test('migratePlaintext encrypts in batches, is idempotent, reports progress, keeps NULLs', async () => {
      const expected = new Map();
      for (let id = 1; id <= 40; id++) {
        const tenant = id % 2 ? 'acme' : 'globex';
        const value = id % 10 === 0 ? null : `user${id}@${tenant}.test`;
        expected.set(id, { tenant, value });
        if (id % 7 === 0) await withTenant(tenant, () => db.insert(users).values({ id, tenantId: tenant, email: value }));
        else await db.insert(users).values({ id, tenantId: tenant, email: value === null ? null : sql`${value}` });
      }
      const seen = [];
      const progress = await mod.migratePlaintext(db, {
        table: users,
        key: users.id,
        columns: [{ column: users.email, collection: 'users' }],
        tenant: { column: users.tenantId },
        batchSize: 7,
        onProgress: (p) => seen.push(p),
      });
      assert.equal(progress.scanned, 40);
      assert.equal(progress.nulls, 4);
      assert.equal(progress.skipped, 5); // ids 7, 14, 21, 28, 35 were already envelopes
      assert.equal(progress.written, 31);
      assert.equal(seen.length, 6);
      assert.deepEqual(seen.map((p) => p.scanned), [7, 14, 21, 28, 35, 40]);
      for (const [id, { tenant, value }] of expected) {
        const stored = await raw(users, users.email, id);
        if (value === null) assert.equal(stored, null);
        else assert.equal(new ale.KeyRing([SECRET]).decrypt(stored, tenant, 'users', 'email'), value);
      }
      const again = await mod.migratePlaintext(db, { table: users, key: users.id, columns: [{ column: users.email, collection: 'users' }], tenant: { column: users.tenantId } });
      assert.equal(again.written, 0);
      assert.equal(again.skipped, 36);
    });

    test('migratePlaintext refuses a row whose tenant is NULL, and a missing tenant, before writing anything', async () => {
      // email_index stands in for a nullable tenant column
      await db.insert(users).values({ id: 1, tenantId: 'acme', email: sql`${'a@plain.test'}`, emailIndex: null });
      const columns = [{ column: users.email, collection: 'users' }];
      let err;
      try {
        await mod.migratePlaintext(db, { table: users, key: users.id, columns, tenant: { column: users.emailIndex } });
      } catch (e) {
        err = e;
      }
      assert.equal(err?.code, 'ALE_INVALID_CONTEXT', String(err));
      assert.match(err.message, /row 1: the tenant column is NULL/);
      for (const tenant of [null, undefined, { column: null }]) {
        const e = await mod.migratePlaintext(db, { table: users, key: users.id, columns, tenant }).catch((e) => e);
        assert.equal(e?.code, 'ALE_INVALID_CONTEXT', String(e));
        assert.match(e.message, /options\.tenant must be/);
      }
      assert.equal(await raw(users, users.email, 1), 'a@plain.test');
    });

    test('rotateKeys re-encrypts only what is under a previous key', async () => {
      for (let id = 1; id <= 12; id++) {
        const ring = id % 3 ? oldRing : newRing;
        await db.insert(rotatingUsers).values({ id, tenantId: 'acme', email: sql`${ring.encrypt(`v${id}`, 'acme', 'users', 'email')}` });
      }
      const p = await mod.rotateKeys(db, { table: rotatingUsers, key: rotatingUsers.id, columns: [{ column: rotatingUsers.email, collection: 'users' }], tenant: 'acme', keyRing: newRing, batchSize: 5 });
      assert.deepEqual([p.written, p.skipped], [8, 4]);
      for (let id = 1; id <= 12; id++) {
        const stored = await raw(rotatingUsers, rotatingUsers.email, id);
        assert.equal(newRing.keyIndex(stored, 'acme', 'users', 'email'), 0);
        assert.equal(new ale.KeyRing([SECRET]).decrypt(stored, 'acme', 'users', 'email'), `v${id}`);
      }
      const rows = await withTenant('acme', () => db.select().from(rotatingUsers).orderBy(rotatingUsers.id));
      assert.deepEqual(rows.map((r) => r.email), Array.from({ length: 12 }, (_, i) => `v${i + 1}`));
      assert.equal((await mod.rotateKeys(db, { table: rotatingUsers, key: rotatingUsers.id, columns: [{ column: rotatingUsers.email, collection: 'users' }], tenant: 'acme', keyRing: newRing })).written, 0);
    });
  });

  function withTenant(tenant, fn) {
    return mod.withTenant(tenant, fn);
  }
}

/** Tables shared by the dialects, built with the dialect's own builders. */
export function defineTables(mod, { table, int, text }, { newRing }) {
  const usersColumns = (name, extra = {}) => ({
    id: int('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    email: mod.encryptedText('email', { collection: 'users', ...extra }),
    emailIndex: mod.blindIndexColumn('email_index', { collection: 'users', field: 'email' }),
    profile: mod.encryptedJson('profile', { collection: 'users' }),
  });
  return {
    users: table('users', usersColumns('users')),
    posts: table('posts', { id: int('id').primaryKey(), tenantId: text('tenant_id').notNull(), secret: mod.encryptedText('secret', { collection: 'posts' }) }),
    legacyUsers: legacyUsersWith({ collection: 'legacy_users', legacyPlaintext: true }),
    /** The legacy_users table seen through an email column with these options. */
    legacyUsersWith,
    rotatingUsers: table('rotating_users', {
      id: int('id').primaryKey(),
      tenantId: text('tenant_id').notNull(),
      email: mod.encryptedText('email', { collection: 'users', keyRing: newRing }),
      emailIndex: mod.blindIndexColumn('email_index', { collection: 'users', field: 'email', keyRing: newRing }),
    }),
  };
  function legacyUsersWith(options) {
    return table('legacy_users', { id: int('id').primaryKey(), tenantId: text('tenant_id').notNull(), email: mod.encryptedText('email', options) });
  }
}

/** DDL for those tables; `types` maps the dialect's SQL types. */
export function tableDdl({ int, text, envelope, index }) {
  return [
    `CREATE TABLE users (id ${int} PRIMARY KEY, tenant_id ${text} NOT NULL, email ${envelope}, email_index ${index}, profile ${envelope})`,
    `CREATE TABLE posts (id ${int} PRIMARY KEY, tenant_id ${text} NOT NULL, secret ${envelope})`,
    `CREATE TABLE legacy_users (id ${int} PRIMARY KEY, tenant_id ${text} NOT NULL, email ${envelope})`,
    `CREATE TABLE rotating_users (id ${int} PRIMARY KEY, tenant_id ${text} NOT NULL, email ${envelope}, email_index ${index})`,
  ];
}
