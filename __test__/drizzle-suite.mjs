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
 * @param {string} d.binaryType  the SQL type of a column with storage: 'binary'
 * @param {boolean} [d.textInBlob]  the database keeps a TEXT value in a BLOB column as text (SQLite)
 */
export function drizzleSuite(d) {
  const { mod } = d;
  const newRing = new ale.KeyRing([SECRET, OLD_SECRET]);
  const oldRing = new ale.KeyRing([OLD_SECRET]);
  const primary = new ale.KeyRing([SECRET]);
  const t = d.schema(mod, { newRing });
  const { users, posts, legacyUsers, rotatingUsers, legacyUsersWith, binUsers, binRotating, binLegacy, moving } = t;
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
  /** A binary cell as the driver handed it back: bytes (Buffer, or Uint8Array from bun:sqlite), checked, as a Buffer. */
  const rawBytes = async (table, column, id) => {
    const v = await raw(table, column, id);
    if (v === null) return null;
    assert.ok(v instanceof Uint8Array, `the driver returned ${Object.prototype.toString.call(v)} for a binary column`);
    return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  };
  const failuresOf = async (tenant, table) => {
    const { rows, failures } = await withTenant(tenant, () => mod.readWithFailures(() => db.select().from(table).orderBy(table.id), { key: 'id' }));
    return { rows, failures: failures.map((f) => [f.key, f.column, f.code]) };
  };

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
      // No run of the plaintext: base64url has no '@' or '.', and the ciphertext's bytes are not the plaintext's.
      // (A check for 'zoe' alone failed once in CI: three random base64url characters can spell it.)
      assert.ok(!stored.includes('zoe@example.com'));
      assert.ok(!Buffer.from(stored.split(':')[3], 'base64url').includes('zoe@example'));
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
        assert.match(e.message, /column "secret".*collection "posts".*tenant "acme"/);
        assert.equal(e.tenant, 'acme');
        assert.ok(!e.message.includes('moved'), 'never the value');
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
      assert.match(failures[0].message, /table "users", column "email", collection "users", tenant "acme", row 2/);
      // a bigint key (PostgreSQL's bigserial in mode 'bigint', here the id read as one), which JSON cannot show
      const wide = await withTenant('acme', () => mod.readWithFailures(() => db.select({ id: sql`${users.id}`.mapWith(BigInt), email: users.email }).from(users).orderBy(users.id), { key: 'id', table: 'users' }));
      assert.deepEqual(wide.failures.map((f) => [f.key, f.column]), [[2n, 'email']]);
      assert.match(wide.failures[0].message, /tenant "acme", row 2n:/);
      // without the helper, the same read fails as a whole with a coded error naming the column
      assert.equal(await codeOf(withTenant('acme', () => db.select().from(users))), 'ALE_AUTH_FAILED');
    });

    test("bad rows in a join: readWithFailures finds a failed cell in a joined table's part or a nested select, nulls it, and keys it by the part that holds it", async () => {
      await withTenant('acme', async () => {
        for (const id of [1, 2]) {
          await db.insert(users).values({ id, tenantId: 'acme', email: `u${id}@x.test` });
          await db.insert(posts).values({ id: id * 10, tenantId: 'acme', secret: `post ${id}` });
        }
      });
      await setRaw(posts, posts.secret, 20, flipBit(await raw(posts, posts.secret, 10), 3, 0));
      const joined = () => db.select().from(users).leftJoin(posts, eq(posts.id, sql`${users.id} * 10`)).orderBy(users.id);
      const { rows, failures } = await withTenant('acme', () => mod.readWithFailures(joined, { key: 'id', table: 'posts' }));
      assert.deepEqual(rows.map((r) => [r.users.email, r.posts.secret]), [['u1@x.test', 'post 1'], ['u2@x.test', null]]);
      assert.deepEqual(failures.map((f) => [f.key, f.column, f.code]), [[20, 'secret', 'ALE_AUTH_FAILED']]);
      assert.match(failures[0].message, /table "posts", column "secret", collection "posts", tenant "acme", row 20/);
      // a nested partial select: the key is the top row's when the part holding the cell has none
      const nested = () => db.select({ id: users.id, post: { secret: posts.secret } }).from(users).leftJoin(posts, eq(posts.id, sql`${users.id} * 10`)).orderBy(users.id);
      const partial = await withTenant('acme', () => mod.readWithFailures(nested, { key: 'id' }));
      assert.deepEqual(partial.rows.map((r) => r.post.secret), ['post 1', null]);
      assert.deepEqual(partial.failures.map((f) => [f.key, f.column]), [[2, 'secret']]);
      // rows mapped to one cell each: the failed one is nulled in the result
      const cells = await withTenant('acme', () => mod.readWithFailures(() => joined().then((rows) => rows.map((r) => r.posts.secret))));
      assert.deepEqual([cells.rows, cells.failures.map((f) => f.column)], [['post 1', null], ['secret']]);
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

    test('blind index: a row read, spread and saved keeps its index, so the lookup still finds it (the CMS "save document")', async () => {
      await withTenant('acme', () => db.insert(users).values({ id: 1, tenantId: 'acme', email: 'ann@x.test', emailIndex: 'ann@x.test', profile: { name: 'Ann' } }));
      const stored = await raw(users, users.emailIndex, 1);
      const [u] = await withTenant('acme', () => db.select().from(users).where(eq(users.id, 1)));
      assert.ok(u.emailIndex instanceof mod.StoredIndex, 'read back as a StoredIndex');
      assert.equal(String(u.emailIndex), stored);
      assert.equal(JSON.stringify(u).includes(stored), false, 'left out of JSON, so it cannot come back as a string');
      await withTenant('acme', () => db.update(users).set({ ...u, profile: { name: 'Ann B' } }).where(eq(users.id, u.id)));
      assert.equal(await raw(users, users.emailIndex, 1), stored, 'written back unchanged');
      const found = await withTenant('acme', () => db.select({ id: users.id }).from(users).where(eq(users.emailIndex, 'ann@x.test')));
      assert.deepEqual(found, [{ id: 1 }]);
      // the value read compares as it is stored; a string is still a plaintext to index
      assert.deepEqual(await withTenant('acme', () => db.select({ id: users.id }).from(users).where(eq(users.emailIndex, u.emailIndex))), [{ id: 1 }]);
      assert.deepEqual(await withTenant('acme', () => db.select({ id: users.id }).from(users).where(mod.matchBlindIndex(users.emailIndex, u.emailIndex))), [{ id: 1 }]);
      assert.deepEqual(await withTenant('acme', () => db.select({ id: users.id }).from(users).where(eq(users.emailIndex, stored))), [], 'the hash as a string is hashed');
      // a row whose JSON went to a browser and came back has no index field: the update leaves the index alone
      const posted = JSON.parse(JSON.stringify(u));
      await withTenant('acme', () => db.update(users).set({ ...posted, profile: { name: 'Ann C' } }).where(eq(users.id, u.id)));
      assert.equal(await raw(users, users.emailIndex, 1), stored);
      // Copied into another tenant as read, the index would be acme's hash, which globex's lookups never match: refused, nothing written.
      await assert.rejects(
        withTenant('globex', () => db.insert(users).values({ ...u, id: 9, tenantId: 'globex' })),
        (e) => e.code === 'ALE_INVALID_INPUT' && /read for tenant "acme"/.test(e.message) && e.tenant === 'globex' && e.column === users.emailIndex.name && !e.message.includes(stored) && !e.message.includes('ann@'),
      );
      assert.deepEqual(await db.select({ id: users.id }).from(users).where(eq(users.id, 9)), []);
      for (const where of [() => eq(users.emailIndex, u.emailIndex), () => mod.matchBlindIndex(users.emailIndex, u.emailIndex)]) {
        await assert.rejects(
          withTenant('globex', () => db.select({ id: users.id }).from(users).where(where())),
          (e) => e.code === 'ALE_INVALID_INPUT' && /read for tenant "acme"/.test(e.message),
        );
      }
      // Read outside any scope, its tenant is not known, and it is not compared (docs/drizzle.md).
      const [bare] = await db.select({ emailIndex: users.emailIndex }).from(users).where(eq(users.id, 1));
      await withTenant('globex', () => db.insert(users).values({ ...u, id: 8, tenantId: 'globex', emailIndex: bare.emailIndex }));
      assert.equal(await raw(users, users.emailIndex, 8), stored);
      await withTenant('globex', () => db.insert(users).values({ ...u, id: 9, tenantId: 'globex', emailIndex: 'ann@x.test' }));
      assert.deepEqual(await withTenant('globex', () => db.select({ id: users.id }).from(users).where(eq(users.emailIndex, 'ann@x.test'))), [{ id: 9 }]);
    });

    test('matchBlindIndex refuses a placeholder, whose value would reach the database unhashed', async () => {
      const e = await withTenant('acme', () => mod.matchBlindIndex(users.emailIndex, sql.placeholder('email'))).then(() => null, (e) => e);
      assert.equal(e?.code, 'ALE_INVALID_INPUT', String(e));
      assert.match(e.message, /placeholder's value reaches the database unhashed/);
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
      await assert.rejects(withTenant('acme', () => mod.matchBlindIndex(rotatingUsers.email, 'old@x.test')), { code: 'ALE_INVALID_INPUT' });
      await assert.rejects(withTenant('acme', () => mod.matchBlindIndex(rotatingUsers.id, 'old@x.test')), { code: 'ALE_INVALID_INPUT' });
    });

    test('legacy plaintext: opt-in reads and counts it; by default it is an error', async () => {
      await db.insert(legacyUsers).values({ id: 1, tenantId: 'acme', email: sql`${'old@plain.test'}` });
      await db.insert(users).values({ id: 1, tenantId: 'acme', email: sql`${'old@plain.test'}` });
      const before = mod.legacyPlaintextReads()['legacy_users.email'] ?? 0;
      const rows = await withTenant('acme', () => db.select().from(legacyUsers));
      assert.equal(rows[0].email, 'old@plain.test');
      assert.equal(mod.legacyPlaintextReads()['legacy_users.email'], before + 1);
      const e = await withTenant('acme', () => db.select().from(users)).catch((e) => e);
      assert.equal(e?.code, 'ALE_MALFORMED_ENVELOPE');
      // it says what to do, and nothing of the value
      assert.match(e.message, /migratePlaintext\(\) encrypts them in place, and the column option legacyPlaintext: true reads them/);
      assert.ok(!e.message.includes('old@plain') && !inspect(e).includes('old@plain'));
      assert.ok(!inspect(e).includes('undefined'), 'no field of the error is shown as undefined');
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

    // SQLite alone lets a text column hold bytes (a table that drizzle-kit rebuilt from binary storage keeps its BLOBs).
    test('legacy plaintext serves only strings: bytes in the text column (a binary envelope) fail the read with the code and words migratePlaintext refuses them with', { skip: d.binaryType !== 'blob' }, async () => {
      const envelope = new ale.KeyRing([SECRET]).encryptBinary('the plaintext', 'acme', 'legacy_users', 'email');
      await db.insert(legacyUsers).values({ id: 1, tenantId: 'acme', email: sql`${envelope}` });
      const e = await withTenant('acme', () => db.select().from(legacyUsers)).catch((e) => e);
      assert.equal(e?.code, 'ALE_MALFORMED_ENVELOPE', e?.stack ?? `read as ${JSON.stringify(e)}`);
      assert.match(e.message, /the text column holds bytes, not a text envelope/);
      const m = await mod.migratePlaintext(db, { table: legacyUsers, key: legacyUsers.id, columns: [{ column: legacyUsers.email }], tenant: 'acme' }).catch((e) => e);
      assert.equal(m?.code, 'ALE_MALFORMED_ENVELOPE');
      assert.match(m.message, /the text column holds bytes, not a text envelope/);
    });

    test('migratePlaintext on a column with a fixed tenant: another tenant, or a tenant column, is refused before a row is read; its own seals what the column reads', async () => {
      const main = legacyUsersWith({ collection: 'legacy_users', legacyPlaintext: true, tenant: 'main' });
      await db.insert(main).values({ id: 1, tenantId: 'default', email: sql`${'a@plain.test'}` });
      for (const tenant of ['default', { column: main.tenantId }]) {
        const e = await mod.migratePlaintext(db, { table: main, key: main.id, columns: [{ column: main.email }], tenant }).catch((e) => e);
        assert.equal(e?.code, 'ALE_INVALID_CONTEXT', String(e?.stack ?? JSON.stringify(e)));
        assert.match(e.message, /binds every value to tenant "main"/);
      }
      assert.equal(await raw(main, main.email, 1), 'a@plain.test', 'nothing was written');
      assert.equal((await mod.migratePlaintext(db, { table: main, key: main.id, columns: [{ column: main.email }], tenant: 'main' })).written, 1);
      assert.ok(ale.isEnvelope(await raw(main, main.email, 1)));
      assert.deepEqual((await db.select().from(main)).map((r) => r.email), ['a@plain.test']);
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

    test('migratePlaintext on an encryptedJson column refuses plaintext that is not JSON text, which its reads could not parse, naming the row and not the value', async () => {
      await db.insert(users).values({ id: 1, tenantId: 'acme', email: null, profile: sql`${'{"a":1}'}` });
      await db.insert(users).values({ id: 2, tenantId: 'acme', email: null, profile: sql`${'hello there'}` });
      // an empty string, which SveltyCMS's module leaves unencrypted: read as it is, and sealed as its JSON
      await db.insert(users).values({ id: 3, tenantId: 'acme', email: null, profile: sql`${''}` });
      const run = () => mod.migratePlaintext(db, { table: users, key: users.id, columns: [{ column: users.profile, collection: 'users' }], tenant: 'acme' });
      const e = await run().then(() => null, (e) => e);
      assert.equal(e?.code, 'ALE_INVALID_JSON');
      assert.match(e.message, /row 2/);
      assert.match(e.message, /encryptedText/);
      assert.ok(!inspect(e).includes('hello there'), 'the value is nowhere in the error');
      assert.equal(await raw(users, users.profile, 2), 'hello there', 'the row is left as it was');
      // stored as the JSON text of the string, it migrates and reads back as that string
      await db.update(users).set({ profile: sql`${JSON.stringify('hello there')}` }).where(eq(users.id, 2));
      assert.equal((await run()).written, 3);
      assert.ok(ale.isEnvelope(await raw(users, users.profile, 3)));
      const rows = await withTenant('acme', () => db.select({ profile: users.profile }).from(users).orderBy(users.id));
      assert.deepEqual(rows.map((r) => r.profile), [{ a: 1 }, 'hello there', '']);
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

    test('a key column that is not unique, or holds a NULL, is refused before anything is written: the walk would pass rows by', async () => {
      // tenant_id is neither the primary key nor unique; email_index is nullable
      await db.insert(users).values([
        { id: 1, tenantId: 'acme', email: sql`${'a@plain.test'}`, emailIndex: sql`${'k1'}` },
        { id: 2, tenantId: 'acme', email: sql`${'b@plain.test'}`, emailIndex: null },
      ]);
      const columns = [{ column: users.email, collection: 'users' }];
      for (const [key, pattern] of [
        [users.tenantId, /"tenant_id" is not unique: "?acme"? is the key of several rows/],
        [users.emailIndex, /"email_index" is NULL in a row/],
      ]) {
        const e = await mod.migratePlaintext(db, { table: users, key, columns, tenant: 'acme', batchSize: 1 }).catch((e) => e);
        assert.equal(e?.code, 'ALE_INVALID_INPUT', String(e));
        assert.match(e.message, pattern);
      }
      assert.deepEqual([await raw(users, users.email, 1), await raw(users, users.email, 2)], ['a@plain.test', 'b@plain.test'], 'nothing written');
      // the table's own key walks it
      assert.equal((await mod.migratePlaintext(db, { table: users, key: users.id, columns, tenant: 'acme', batchSize: 1 })).written, 2);
    });

    test('migratePlaintext and rotateKeys refuse a collection or field the column does not read with, before writing anything', async () => {
      await db.insert(users).values({ id: 1, tenantId: 'acme', email: sql`${'a@plain.test'}` });
      for (const spec of [{ collection: 'people' }, { collection: 'users', field: 'mail' }]) {
        const columns = [{ column: users.email, ...spec }];
        const e = await mod.migratePlaintext(db, { table: users, key: users.id, columns, tenant: 'acme' }).catch((e) => e);
        assert.equal(e?.code, 'ALE_INVALID_CONTEXT', String(e));
        assert.match(e.message, /column "email" reads collection "users", field "email"/);
        const r = await mod.rotateKeys(db, { table: users, key: users.id, columns, tenant: 'acme', keyRing: newRing }).catch((e) => e);
        assert.equal(r?.code, 'ALE_INVALID_CONTEXT', String(r));
      }
      assert.equal(await raw(users, users.email, 1), 'a@plain.test');
    });

    test('migratePlaintext and rotateKeys refuse a keyRing whose primary the column does not read with (ALE_INVALID_KEY), before writing anything', async () => {
      await db.insert(users).values({ id: 1, tenantId: 'acme', email: sql`${'a@plain.test'}` });
      const columns = [{ column: users.email }];
      const e = await mod.migratePlaintext(db, { table: users, key: users.id, columns, tenant: 'acme', keyRing: new ale.KeyRing([OLD_SECRET]) }).catch((e) => e);
      assert.equal(e?.code, 'ALE_INVALID_KEY', String(e));
      assert.match(e.message, /column "email" cannot read what options.keyRing seals/);
      assert.equal(await raw(users, users.email, 1), 'a@plain.test');
      // the check says only what it knows: another failure (a tenant id with ':') is reported as itself
      const bad = await mod.migratePlaintext(db, { table: users, key: users.id, columns, tenant: 'a:b', keyRing: newRing }).catch((e) => e);
      assert.equal(bad?.code, 'ALE_INVALID_CONTEXT', String(bad));
      await withTenant('acme', () => db.update(users).set({ email: 'a@sealed.test' }).where(eq(users.id, 1)));
      const sealed = await raw(users, users.email, 1);
      const r = await mod.rotateKeys(db, { table: users, key: users.id, columns, tenant: 'acme', keyRing: new ale.KeyRing([OLD_SECRET, SECRET]) }).catch((e) => e);
      assert.equal(r?.code, 'ALE_INVALID_KEY', String(r));
      assert.equal(await raw(users, users.email, 1), sealed);
    });

    test('the batch helpers refuse a column that is not an encrypted column of the table, with ALE_INVALID_INPUT, before touching a row', async () => {
      await db.insert(users).values({ id: 1, tenantId: 'acme', email: sql`${'a@plain.test'}` });
      const base = { table: users, key: users.id, tenant: { column: users.tenantId } };
      const refused = [
        [{ column: users.tenantId, collection: 'users' }, /column "tenant_id" is not an encryptedText or encryptedJson column/],
        [{ column: users.emailIndex }, /column "email_index" is not an encryptedText or encryptedJson column/],
        [{ column: 'email', collection: 'users' }, /column "email" is not an encryptedText/],
        [{ column: posts.secret }, /column "secret" does not belong to table "users"/],
      ];
      for (const [spec, message] of refused) {
        for (const op of ['migratePlaintext', 'rotateKeys']) {
          const e = await mod[op](db, { ...base, keyRing: newRing, columns: [spec] }).catch((e) => e);
          assert.equal(e?.code, 'ALE_INVALID_INPUT', `${op}: ${e}`);
          assert.match(e.message, message);
        }
      }
      const noTable = await mod.migratePlaintext(db, { ...base, table: {}, columns: [{ column: users.email }] }).catch((e) => e);
      assert.equal(noTable?.code, 'ALE_INVALID_INPUT', String(noTable));
      // options that are not the table's, or not there: coded, never a TypeError or the driver's error
      for (const [options, message] of [
        [{ table: undefined }, /options.table must be a Drizzle table/],
        [{ key: undefined }, /options.key must be a column of table "users"/],
        [{ key: posts.id }, /options.key must be a column of table "users"/],
        [{ tenant: { column: posts.id } }, /options.tenant.column must be a column of table "users"/],
        [{ columns: [null] }, /column "undefined" is not an encryptedText/],
      ]) {
        for (const op of ['migratePlaintext', 'rotateKeys']) {
          const e = await mod[op](db, { ...base, keyRing: newRing, columns: [{ column: users.email }], ...options }).catch((e) => e);
          assert.equal(e?.code, 'ALE_INVALID_INPUT', `${op} ${Object.keys(options)}: ${e}`);
          assert.match(e.message, message);
        }
      }
      const nullPair = await mod.convertStorage(db, { table: users, key: users.id, columns: [null] }).catch((e) => e);
      assert.equal(nullPair?.code, 'ALE_INVALID_INPUT', String(nullPair));
      assert.deepEqual(await db.select({ t: users.tenantId }).from(users), [{ t: 'acme' }], 'the tenant column is as it was');
      assert.equal(await raw(users, users.email, 1), 'a@plain.test');
      // the collection comes from the column when left out
      const p = await mod.migratePlaintext(db, { ...base, columns: [{ column: users.email }] });
      assert.equal(p.written, 1);
      assert.deepEqual(await withTenant('acme', () => db.select({ email: users.email }).from(users)), [{ email: 'a@plain.test' }]);
    });

    test('options.workers: refused on SQLite (one writer), and checked before anything is written elsewhere', async () => {
      await db.insert(users).values({ id: 1, tenantId: 'acme', email: sql`${'a@plain.test'}` });
      const columns = [{ column: users.email, collection: 'users' }];
      const bad = await mod.rotateKeys(db, { table: users, key: users.id, columns, tenant: 'acme', keyRing: newRing, workers: { job: '' } }).catch((e) => e);
      assert.equal(bad?.code, 'ALE_INVALID_INPUT', String(bad));
      if (d.name.startsWith('sqlite')) {
        const e = await mod.rotateKeys(db, { table: users, key: users.id, columns, tenant: 'acme', keyRing: newRing, workers: { job: 'rotate' } }).catch((e) => e);
        assert.equal(e?.code, 'ALE_INVALID_INPUT', String(e));
        assert.match(e.message, /SQLite has one writer/);
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

    test('binary: the column type is the dialect\'s byte type; text stays the default', () => {
      assert.equal(binUsers.email.getSQLType(), d.binaryType);
      assert.equal(binUsers.profile.getSQLType(), d.binaryType);
      assert.notEqual(users.email.getSQLType(), d.binaryType);
      assert.throws(() => mod.encryptedText('email', { collection: 'users', storage: 'base64' }), { code: 'ALE_INVALID_INPUT' });
      assert.throws(() => mod.blindIndexColumn('email_index', { collection: 'users', storage: 'binary' }), { code: 'ALE_INVALID_INPUT' });
    });

    test('binary: round trip of text, JSON, the empty string and NULL; the column holds the envelope as bytes, 34 over the plaintext', async () => {
      const profile = { name: 'Zoë', tags: ['a', 'b'], n: 1.5, lone: 'a\uD800b', big: 'x'.repeat(70_000) };
      await withTenant('t1', () =>
        db.insert(binUsers).values([
          { id: 1, tenantId: 't1', email: 'zoë@example.com', profile },
          { id: 2, tenantId: 't1', email: null, profile: null },
          { id: 3, tenantId: 't1', email: '', profile: [] },
        ]),
      );
      const rows = await withTenant('t1', () => db.select().from(binUsers).orderBy(binUsers.id));
      assert.deepEqual(rows.map((r) => [r.email, r.profile]), [['zoë@example.com', profile], [null, null], ['', []]]);
      const stored = await rawBytes(binUsers, binUsers.email, 1);
      assert.equal(stored.length, Buffer.byteLength('zoë@example.com') + 34);
      assert.deepEqual([stored[0], stored[1]], [1, 16]);
      assert.ok(!stored.includes('example'));
      assert.equal(primary.decryptBinary(stored, 't1', 'users', 'email'), 'zoë@example.com');
      assert.equal(primary.decrypt(ale.envelopeFromBytes(stored), 't1', 'users', 'email'), 'zoë@example.com', 'the text form of the same envelope');
      assert.equal((await rawBytes(binUsers, binUsers.email, 3)).length, 34);
      const big = await rawBytes(binUsers, binUsers.profile, 1);
      assert.equal(big.length, Buffer.byteLength(JSON.stringify(profile)) + 34);
      assert.equal(await raw(binUsers, binUsers.email, 2), null);
      assert.equal(await raw(binUsers, binUsers.profile, 2), null);
    });

    test('binary: relocation: a value copied to another tenant\'s row or another column fails with ALE_AUTH_FAILED', async () => {
      await withTenant('acme', () => db.insert(binUsers).values({ id: 1, tenantId: 'acme', email: 'a@acme.test', profile: { x: 1 } }));
      await withTenant('globex', () => db.insert(binUsers).values({ id: 2, tenantId: 'globex', email: 'b@globex.test' }));
      const email = await rawBytes(binUsers, binUsers.email, 1);
      await setRaw(binUsers, binUsers.email, 2, email); // into globex's row
      assert.equal(await codeOf(withTenant('globex', () => db.select().from(binUsers).where(eq(binUsers.id, 2)))), 'ALE_AUTH_FAILED');
      await setRaw(binUsers, binUsers.profile, 1, email); // into another column
      const err = await withTenant('acme', () => db.select().from(binUsers).where(eq(binUsers.id, 1))).catch((e) => e);
      assert.ok(err instanceof mod.AleColumnError, String(err));
      assert.equal(err.code, 'ALE_AUTH_FAILED');
      assert.match(err.message, /column "profile", collection "users"/);
    });

    test('binary: bad values (a flipped bit, malformed bytes, another version, a text envelope) are coded; readWithFailures keeps the rest', async () => {
      await withTenant('acme', async () => {
        for (const id of [1, 2, 3, 4, 5]) await db.insert(binUsers).values({ id, tenantId: 'acme', email: `u${id}@x.test`, profile: { id } });
      });
      const good = await rawBytes(binUsers, binUsers.email, 1);
      const flipped = Buffer.from(good);
      flipped[good.length - 1] ^= 1;
      await setRaw(binUsers, binUsers.email, 2, flipped);
      await setRaw(binUsers, binUsers.email, 3, good.subarray(0, 20)); // shorter than its IV and tag
      await setRaw(binUsers, binUsers.email, 4, Buffer.concat([Buffer.from([3]), good.subarray(1)])); // version byte 3
      await setRaw(binUsers, binUsers.email, 5, Buffer.from(ale.encrypt('u5@x.test', 'acme', 'users', 'email'))); // the text form's bytes
      await setRaw(binUsers, binUsers.profile, 1, Buffer.alloc(0));
      const { rows, failures } = await failuresOf('acme', binUsers);
      assert.deepEqual(rows.map((r) => [r.email, r.profile]), [['u1@x.test', null], [null, { id: 2 }], [null, { id: 3 }], [null, { id: 4 }], [null, { id: 5 }]]);
      assert.deepEqual(failures, [
        [1, 'profile', 'ALE_MALFORMED_ENVELOPE'],
        [2, 'email', 'ALE_AUTH_FAILED'],
        [3, 'email', 'ALE_MALFORMED_ENVELOPE'],
        [4, 'email', 'ALE_UNSUPPORTED_VERSION'],
        [5, 'email', 'ALE_MALFORMED_ENVELOPE'],
      ]);
      const textEnvelope = await withTenant('acme', () => db.select().from(binUsers).where(eq(binUsers.id, 5))).catch((e) => e);
      assert.ok(textEnvelope instanceof mod.AleColumnError);
      assert.match(textEnvelope.message, /column "email", collection "users", tenant "acme": .*text envelope.*convertStorage/);
    });

    test('binary: rotateKeys re-encrypts only what is under a previous key', async () => {
      const ctx = (id) => [`t${id % 2}`, 'users', 'email'];
      for (let id = 1; id <= 12; id++) {
        const ring = id % 3 ? oldRing : newRing;
        await db.insert(binRotating).values({ id, tenantId: `t${id % 2}`, email: sql`${ring.encryptBinary(`v${id}`, ...ctx(id))}` });
      }
      await db.insert(binRotating).values({ id: 13, tenantId: 't1', email: null });
      const columns = [{ column: binRotating.email, collection: 'users' }];
      const p = await mod.rotateKeys(db, { table: binRotating, key: binRotating.id, columns, tenant: { column: binRotating.tenantId }, keyRing: newRing, batchSize: 5 });
      assert.deepEqual([p.written, p.skipped, p.nulls, p.batches], [8, 4, 1, 3]);
      for (let id = 1; id <= 12; id++) {
        const stored = await rawBytes(binRotating, binRotating.email, id);
        assert.equal(newRing.keyIndex(ale.envelopeFromBytes(stored), ...ctx(id)), 0);
        assert.equal(primary.decryptBinary(stored, ...ctx(id)), `v${id}`);
      }
      const read = async (tenant) => (await withTenant(tenant, () => db.select().from(binRotating).where(eq(binRotating.tenantId, tenant)).orderBy(binRotating.id))).map((r) => r.email);
      assert.deepEqual(await read('t0'), [2, 4, 6, 8, 10, 12].map((i) => `v${i}`));
      assert.deepEqual(await read('t1'), [...[1, 3, 5, 7, 9, 11].map((i) => `v${i}`), null]);
      assert.equal((await mod.rotateKeys(db, { table: binRotating, key: binRotating.id, columns, tenant: { column: binRotating.tenantId }, keyRing: newRing })).written, 0);
      // a value that is not a binary envelope stops the rotation with the row named
      await setRaw(binRotating, binRotating.email, 2, Buffer.from([1, 16, 0])); // shorter than its IV and tag
      const err = await mod.rotateKeys(db, { table: binRotating, key: binRotating.id, columns, tenant: { column: binRotating.tenantId }, keyRing: newRing }).catch((e) => e);
      assert.equal(err?.code, 'ALE_MALFORMED_ENVELOPE', String(err));
      assert.match(err.message, /table "bin_rotating", column "email", collection "users", row 2/);
    });

    test('binary: legacy plaintext and migratePlaintext share one rule: bytes that are not a binary envelope are UTF-8 plaintext, a text envelope is neither', async () => {
      const legacy = binLegacy({ collection: 'bin_legacy', legacyPlaintext: true });
      const strict = binLegacy({ collection: 'bin_legacy' });
      await db.insert(legacy).values({ id: 1, tenantId: 'acme', email: sql`${Buffer.from('old@plain.test')}` });
      await withTenant('acme', () => db.insert(legacy).values({ id: 2, tenantId: 'acme', email: 'new@x.test' }));
      await db.insert(legacy).values({ id: 3, tenantId: 'acme', email: null });
      const before = mod.legacyPlaintextReads()['bin_legacy.email'] ?? 0;
      assert.deepEqual((await withTenant('acme', () => db.select().from(legacy).orderBy(legacy.id))).map((r) => r.email), ['old@plain.test', 'new@x.test', null]);
      assert.equal(mod.legacyPlaintextReads()['bin_legacy.email'], before + 1);
      // without the option, plaintext is not a binary envelope: its first byte ('o') is no version
      assert.deepEqual((await failuresOf('acme', strict)).failures, [[1, 'email', 'ALE_MALFORMED_ENVELOPE']]);
      // a text envelope, and bytes that are not UTF-8, are not plaintext even in the legacy mode
      await db.insert(legacy).values({ id: 4, tenantId: 'acme', email: sql`${Buffer.from(ale.encrypt('x', 'acme', 'bin_legacy', 'email'))}` });
      await db.insert(legacy).values({ id: 5, tenantId: 'acme', email: sql`${Buffer.from([0xff, 0xfe, 0x00])}` });
      assert.deepEqual((await failuresOf('acme', legacy)).failures, [[4, 'email', 'ALE_MALFORMED_ENVELOPE'], [5, 'email', 'ALE_MALFORMED_ENVELOPE']]);
      const migrate = (batchSize) => mod.migratePlaintext(db, { table: legacy, key: legacy.id, columns: [{ column: legacy.email, collection: 'bin_legacy' }], tenant: 'acme', batchSize });
      const err = await migrate(3).catch((e) => e);
      assert.equal(err?.code, 'ALE_MALFORMED_ENVELOPE', String(err));
      assert.match(err.message, /row 4: .*text envelope/);
      // the first batch (rows 1 to 3) was committed before row 4 stopped the run
      const stored = await rawBytes(legacy, legacy.email, 1);
      assert.equal(primary.decryptBinary(stored, 'acme', 'bin_legacy', 'email'), 'old@plain.test');
      await setRaw(legacy, legacy.email, 4, null);
      await setRaw(legacy, legacy.email, 5, Buffer.from('ünïcödé'));
      const p = await migrate(2);
      assert.deepEqual([p.written, p.skipped, p.nulls], [1, 2, 2]);
      assert.deepEqual((await withTenant('acme', () => db.select().from(strict).orderBy(strict.id))).map((r) => r.email), ['old@plain.test', 'new@x.test', null, null, 'ünïcödé']);
    });

    // only SQLite keeps a TEXT value in a byte column; PostgreSQL and MySQL convert it to bytes
    if (d.textInBlob) test('binary: a TEXT value in a BLOB column (SQLite keeps it so) is legacy plaintext under the option, and an error without it', async () => {
      const legacy = binLegacy({ collection: 'bin_legacy', legacyPlaintext: true });
      const strict = binLegacy({ collection: 'bin_legacy' });
      await db.insert(legacy).values([
        { id: 1, tenantId: 'acme', email: sql`${'old@plain.test'}` },
        { id: 2, tenantId: 'acme', email: sql`${ale.encrypt('moved', 'acme', 'bin_legacy', 'email')}` },
      ]);
      assert.equal(typeof (await raw(legacy, legacy.email, 1)), 'string');
      assert.deepEqual(await failuresOf('acme', legacy), { rows: [{ id: 1, tenantId: 'acme', email: 'old@plain.test' }, { id: 2, tenantId: 'acme', email: null }], failures: [[2, 'email', 'ALE_MALFORMED_ENVELOPE']] });
      assert.deepEqual((await failuresOf('acme', strict)).failures, [[1, 'email', 'ALE_MALFORMED_ENVELOPE'], [2, 'email', 'ALE_MALFORMED_ENVELOPE']]);
      await setRaw(legacy, legacy.email, 2, null);
      assert.equal((await mod.migratePlaintext(db, { table: legacy, key: legacy.id, columns: [{ column: legacy.email, collection: 'bin_legacy' }], tenant: 'acme' })).written, 1);
      assert.ok((await raw(legacy, legacy.email, 1)) instanceof Uint8Array);
      assert.deepEqual((await withTenant('acme', () => db.select().from(strict))).map((r) => r.email), ['old@plain.test', null]);
    });

    test('convertStorage moves text envelopes into a binary column and back, losslessly, in batches; NULLs stay; a rerun writes nothing', async () => {
      const originals = new Map();
      for (let id = 1; id <= 25; id++) {
        const tenant = id % 2 ? 'acme' : 'globex';
        const email = id % 6 === 0 ? null : `user${id}@${tenant}.test`;
        const profile = id % 4 === 0 ? null : { id };
        originals.set(id, { tenant, email, profile });
        await withTenant(tenant, () => db.insert(moving).values({ id, tenantId: tenant, email, profile }));
      }
      const text = new Map();
      for (const id of originals.keys()) text.set(id, [await raw(moving, moving.email, id), await raw(moving, moving.profile, id)]);
      const seen = [];
      const toBinary = [{ from: moving.email, to: moving.emailBin }, { from: moving.profile, to: moving.profileBin }];
      const p = await mod.convertStorage(db, { table: moving, key: moving.id, columns: toBinary, batchSize: 4, onProgress: (x) => seen.push(x.scanned) });
      const [emails, profiles] = [[...originals.values()].filter((o) => o.email !== null).length, [...originals.values()].filter((o) => o.profile !== null).length];
      assert.deepEqual([p.scanned, p.written, p.skipped, p.nulls, p.batches], [25, emails + profiles, 0, 50 - emails - profiles, 7]);
      assert.deepEqual(seen, [4, 8, 12, 16, 20, 24, 25]);
      for (const [id, [email, profile]] of text) {
        assert.equal(await raw(moving, moving.email, id), null);
        assert.equal(await raw(moving, moving.profile, id), null);
        assert.deepEqual(await rawBytes(moving, moving.emailBin, id), email === null ? null : ale.envelopeToBytes(email), `row ${id}`);
        assert.deepEqual(await rawBytes(moving, moving.profileBin, id), profile === null ? null : ale.envelopeToBytes(profile), `row ${id}`);
      }
      for (const tenant of ['acme', 'globex']) {
        const rows = await withTenant(tenant, () => db.select().from(moving).where(eq(moving.tenantId, tenant)).orderBy(moving.id));
        assert.deepEqual(rows.map((r) => [r.id, r.emailBin, r.profileBin]), [...originals].filter(([, o]) => o.tenant === tenant).map(([id, o]) => [id, o.email, o.profile]));
      }
      const again = await mod.convertStorage(db, { table: moving, key: moving.id, columns: toBinary });
      assert.deepEqual([again.written, again.skipped, again.nulls], [0, 0, 50]);
      // and back: the text column holds the very envelopes it held before
      const back = await mod.convertStorage(db, { table: moving, key: moving.id, columns: toBinary.map(({ from, to }) => ({ from: to, to: from })), batchSize: 10 });
      assert.equal(back.written, emails + profiles);
      for (const [id, [email, profile]] of text) {
        assert.deepEqual([await raw(moving, moving.email, id), await raw(moving, moving.profile, id), await raw(moving, moving.emailBin, id)], [email, profile, null]);
      }
    });

    test('convertStorage leaves a row alone when its target already holds a value', async () => {
      await withTenant('acme', () => db.insert(moving).values([
        { id: 1, tenantId: 'acme', email: 'old@x.test', emailBin: 'new@x.test' },
        { id: 2, tenantId: 'acme', email: 'two@x.test' },
      ]));
      const p = await mod.convertStorage(db, { table: moving, key: moving.id, columns: [{ from: moving.email, to: moving.emailBin }] });
      assert.deepEqual([p.written, p.skipped, p.nulls], [1, 1, 0]);
      const [one, two] = await withTenant('acme', () => db.select().from(moving).orderBy(moving.id));
      assert.deepEqual([one.email, one.emailBin, two.email, two.emailBin], ['old@x.test', 'new@x.test', null, 'two@x.test']);
    });

    test('convertStorage refuses pairs that would not read back, and stops at a value that is not an envelope, naming the row', async () => {
      await withTenant('acme', () => db.insert(moving).values({ id: 1, tenantId: 'acme', email: 'a@x.test' }));
      const convert = (columns) => mod.convertStorage(db, { table: moving, key: moving.id, columns }).then(() => 'no error', (e) => [e.code, e.message]);
      const cases = [
        [[{ from: moving.email, to: moving.email }], 'ALE_INVALID_INPUT', /both columns have storage 'text'/],
        [[{ from: moving.email, to: moving.otherBin }], 'ALE_INVALID_CONTEXT', /give the target \{ collection: "users", field: "email" \}/],
        [[{ from: moving.email, to: moving.profileBin }], 'ALE_INVALID_INPUT', /encryptedText, the other encryptedJson/],
        [[{ from: moving.tenantId, to: moving.emailBin }], 'ALE_INVALID_INPUT', /not an encryptedText or encryptedJson column/],
        [[{ from: users.email, to: moving.emailBin }], 'ALE_INVALID_INPUT', /does not belong to table "moving"/],
        [[], 'ALE_INVALID_INPUT', /at least one/],
      ];
      for (const [columns, code, message] of cases) {
        const [gotCode, gotMessage] = await convert(columns);
        assert.equal(gotCode, code, gotMessage);
        assert.match(gotMessage, message);
      }
      await db.insert(moving).values({ id: 2, tenantId: 'acme', email: sql`${'plain@x.test'}` });
      const [code, message] = await convert([{ from: moving.email, to: moving.emailBin }]);
      assert.equal(code, 'ALE_MALFORMED_ENVELOPE');
      assert.match(message, /table "moving", column "email", collection "users", row 2/);
      assert.equal(await raw(moving, moving.email, 2), 'plain@x.test');
      assert.equal(await raw(moving, moving.emailBin, 1), null, 'the batch that held the bad row was not written');
    });
  });

  function withTenant(tenant, fn) {
    return mod.withTenant(tenant, fn);
  }
}

/** The tables the suite creates; a dialect's reset() drops them. */
export const TABLES = ['users', 'posts', 'legacy_users', 'rotating_users', 'bin_users', 'bin_rotating', 'bin_legacy', 'moving'];

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
    binUsers: table('bin_users', {
      id: int('id').primaryKey(),
      tenantId: text('tenant_id').notNull(),
      email: mod.encryptedText('email', { collection: 'users', storage: 'binary' }),
      profile: mod.encryptedJson('profile', { collection: 'users', storage: 'binary' }),
    }),
    binRotating: table('bin_rotating', {
      id: int('id').primaryKey(),
      tenantId: text('tenant_id').notNull(),
      email: mod.encryptedText('email', { collection: 'users', storage: 'binary', keyRing: newRing }),
    }),
    /** The bin_legacy table seen through a binary email column with these options. */
    binLegacy: (options) => table('bin_legacy', { id: int('id').primaryKey(), tenantId: text('tenant_id').notNull(), email: mod.encryptedText('email', { ...options, storage: 'binary' }) }),
    /** Text columns and their binary successors, as convertStorage expects them: the same collection and field. */
    moving: table('moving', {
      id: int('id').primaryKey(),
      tenantId: text('tenant_id').notNull(),
      email: mod.encryptedText('email', { collection: 'users' }),
      emailBin: mod.encryptedText('email_bin', { collection: 'users', field: 'email', storage: 'binary' }),
      profile: mod.encryptedJson('profile', { collection: 'users' }),
      profileBin: mod.encryptedJson('profile_bin', { collection: 'users', field: 'profile', storage: 'binary' }),
      otherBin: mod.encryptedText('other_bin', { collection: 'users', storage: 'binary' }),
    }),
  };
  function legacyUsersWith(options) {
    return table('legacy_users', { id: int('id').primaryKey(), tenantId: text('tenant_id').notNull(), email: mod.encryptedText('email', options) });
  }
}

/** DDL for those tables; `types` maps the dialect's SQL types. */
export function tableDdl({ int, text, envelope, index, binary }) {
  return [
    `CREATE TABLE users (id ${int} PRIMARY KEY, tenant_id ${text} NOT NULL, email ${envelope}, email_index ${index}, profile ${envelope})`,
    `CREATE TABLE posts (id ${int} PRIMARY KEY, tenant_id ${text} NOT NULL, secret ${envelope})`,
    `CREATE TABLE legacy_users (id ${int} PRIMARY KEY, tenant_id ${text} NOT NULL, email ${envelope})`,
    `CREATE TABLE rotating_users (id ${int} PRIMARY KEY, tenant_id ${text} NOT NULL, email ${envelope}, email_index ${index})`,
    `CREATE TABLE bin_users (id ${int} PRIMARY KEY, tenant_id ${text} NOT NULL, email ${binary}, profile ${binary})`,
    `CREATE TABLE bin_rotating (id ${int} PRIMARY KEY, tenant_id ${text} NOT NULL, email ${binary})`,
    `CREATE TABLE bin_legacy (id ${int} PRIMARY KEY, tenant_id ${text} NOT NULL, email ${binary})`,
    `CREATE TABLE moving (id ${int} PRIMARY KEY, tenant_id ${text} NOT NULL, email ${envelope}, email_bin ${binary}, profile ${envelope}, profile_bin ${binary}, other_bin ${binary})`,
  ];
}
