// Key hygiene: drive every error path and check that no message or stack
// contains the secret, the derived key (hex or base64), or the plaintext.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hkdfSync } from 'node:crypto';
import { inspect } from 'node:util';
import { ale, CTX, OLD_SECRET } from './helpers.mjs';
import { resolveKeyMaterial } from './fixtures/sveltycms-reference.mjs';

// A base64url secret (44 characters with '-': the key is its bytes) and a
// passphrase (the key is derived; it also has a SHA-256 legacy key). The keys
// come from the independent reference, so they are the ones the product uses.
const SECRET = 'hygiene-secret-7f3a9c1e5b2d4f60-do-not-leak';
const PASSPHRASE = 'hygiene passphrase, with spaces: never in an error';
const PLAINTEXT = 'plaintext-that-must-not-appear-in-errors';
const raw = resolveKeyMaterial(SECRET);
const pass = resolveKeyMaterial(PASSPHRASE);
assert.equal(raw.kind, 'base64url');
assert.equal(pass.kind, 'passphrase');
const indexKey = (k) => Buffer.from(hkdfSync('sha256', k, Buffer.alloc(0), 'sveltycms-blind-index', 32));
const keys = [raw.key, pass.key, ...pass.fallbacks, indexKey(raw.key), indexKey(pass.key)];
const forbidden = [SECRET, PASSPHRASE, PLAINTEXT, ...keys.flatMap((k) => [k.toString('hex'), k.toString('base64'), k.toString('base64url')])];

function errorOf(fn) {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected an error');
}

test('no error path reveals key material or plaintext', async () => {
  const ring = new ale.KeyRing([SECRET]);
  const env = ring.encrypt(PLAINTEXT, ...CTX);
  const [v, iv, tag, ct] = env.split(':');
  const flipped = `${v}:${iv}:${tag}:${ct.slice(0, -2)}${ct.at(-2) === 'A' ? 'B' : 'A'}${ct.at(-1)}`;
  const errors = [
    errorOf(() => new ale.KeyRing([SECRET.slice(0, 20)])),
    errorOf(() => new ale.KeyRing([SECRET, `${SECRET.slice(0, 10)}`])),
    errorOf(() => ale.KeyRing.fromEnv({ ENCRYPTION_KEY: SECRET, ENCRYPTION_KEY_PREVIOUS: `${SECRET.slice(0, 12)}` })),
    errorOf(() => ale.KeyRing.fromEnv({ ENCRYPTION_KEY: SECRET.slice(0, 31) })),
    errorOf(() => new ale.KeyRing([`${SECRET}\uD800`])),
    errorOf(() => ring.decrypt(env, 'other', CTX[1], CTX[2])),
    errorOf(() => ring.decrypt(flipped, ...CTX)),
    errorOf(() => ring.decrypt(`${env}:x`, ...CTX)),
    errorOf(() => ring.decrypt(`v2${env.slice(2)}`, ...CTX)),
    errorOf(() => ring.decrypt(PLAINTEXT, ...CTX)),
    errorOf(() => ring.encrypt(`${PLAINTEXT}\uD800`, ...CTX)),
    errorOf(() => ring.encrypt(PLAINTEXT, 'a:b', CTX[1], CTX[2])),
    errorOf(() => ring.encrypt(PLAINTEXT, '', CTX[1], CTX[2])),
    errorOf(() => ring.decryptMany([env, PLAINTEXT], ...CTX)),
    errorOf(() => ring.keyIndex(flipped, ...CTX)),
    errorOf(() => new ale.KeyRing([PASSPHRASE]).decrypt(env, ...CTX)),
    errorOf(() => new ale.KeyRing([PASSPHRASE, SECRET]).decrypt(flipped, ...CTX)),
    errorOf(() => new ale.KeyRing([PASSPHRASE.slice(0, 30)])),
    await ring.decryptAsync(flipped, ...CTX).catch((e) => e),
  ];
  assert.equal(errors.length, 19);
  for (const e of errors) {
    assert.ok(e instanceof Error && /^ALE_/.test(e.code), `coded error: ${e}`);
    const text = `${e.message}\n${e.stack}\n${inspect(e)}\n${JSON.stringify(e)}`;
    for (const f of forbidden) assert.ok(!text.includes(f), `${e.code} leaks ${f.slice(0, 8)}…: ${e.message}`);
  }
});

test('a KeyRing shows nothing through inspect, JSON or its properties', () => {
  const ring = new ale.KeyRing([SECRET, PASSPHRASE]);
  const text = `${inspect(ring, { showHidden: true, depth: 5 })}${JSON.stringify(ring)}${String(ring)}${Object.getOwnPropertyNames(ring)}`;
  for (const f of forbidden) assert.ok(!text.includes(f));
  assert.deepEqual(Object.keys(ring), []);
});

test("a failed query's DrizzleQueryError lists envelopes and index terms, never the plaintext or a key", async () => {
  const { DrizzleQueryError } = await import('drizzle-orm/errors');
  const { drizzle } = await import('drizzle-orm/sqlite-proxy');
  const { integer, sqliteTable } = await import('drizzle-orm/sqlite-core');
  const m = await import('@sveltycms/ale/drizzle/sqlite');
  const on = { collection: 'people', keyRing: new ale.KeyRing([SECRET]), tenant: 'acme' };
  const people = sqliteTable('people', {
    id: integer('id').primaryKey(),
    name: m.encryptedText('name', on),
    nameSearch: m.searchIndexColumn('name_search', { ...on, field: 'name' }),
    mail: m.encryptedText('mail', on),
    mailIndex: m.blindIndexColumn('mail_index', { ...on, field: 'mail' }),
    score: m.encryptedNumber('score', on),
    scoreRange: m.rangeIndexColumn('score_range', { ...on, field: 'score', type: 'number' }),
  });
  // A database that refuses every query, as one whose table is missing or locked does.
  const db = drizzle(async () => {
    throw new Error('SQLITE_ERROR: no such table: people');
  });
  const [name, mail, score] = [`${PLAINTEXT} Müller`, 'hygiene.mail@example.org', 271828.5];
  // Each column's token key (crates/core/src/search/tokens.rs): HKDF from the index key, per tenant:collection:field.
  const columnKeys = ['name', 'score'].map((field) => Buffer.from(hkdfSync('sha256', indexKey(raw.key), Buffer.alloc(0), `sveltycms-search-v1\0acme:people:${field}`, 32)));
  const secrets = [...forbidden, ...columnKeys.flatMap((k) => [k.toString('hex'), k.toString('base64'), k.toString('base64url')])];
  const failures = await Promise.all(
    [
      db.insert(people).values({ id: 1, name, nameSearch: name, mail, mailIndex: mail, score, scoreRange: score }),
      db.select().from(people).where(m.searchContains(people.nameSearch, 'Müller')),
      db.select().from(people).where(m.searchWords(people.nameSearch, `${PLAINTEXT.slice(0, 9)}*`)),
      db.select().from(people).where(m.searchPrefix(people.nameSearch, 'Mülle')),
      db.select().from(people).where(m.matchBlindIndex(people.mailIndex, mail)),
      db.select().from(people).where(m.rangeBetween(people.scoreRange, 271828, 271829)),
    ].map((query) => query.then(() => assert.fail('the query ran'), (e) => e)),
  );
  for (const e of failures) {
    assert.ok(e instanceof DrizzleQueryError, String(e));
    // Drizzle's message lists the parameters (SECURITY.md, "Key hygiene"): envelopes and index terms, what the database is sent.
    assert.match(e.message, /\nparams: ./);
    assert.ok(e.params.length > 0 && e.params.every((p) => typeof p !== 'string' || p.startsWith('v1:') || /^[\w+ -]+$/.test(p)), `params: ${e.params}`);
    const text = `${e.message}\n${e.stack}\n${inspect(e)}`;
    for (const f of [...secrets, 'Müll', 'müll', 'hygiene.mail', PLAINTEXT.slice(0, 9), '271828', '271829']) assert.ok(!text.includes(f), `leaks ${f.slice(0, 8)}…: ${e.message.slice(0, 200)}`);
  }
});

test("migratePlaintext and rotateKeys: a batch's failed write is ALE_BATCH_WRITE_FAILED with the database's codes, never the plaintext it compared", async () => {
  const { DatabaseSync } = await import('node:sqlite');
  const { drizzle } = await import('drizzle-orm/sqlite-proxy');
  const { integer, sqliteTable } = await import('drizzle-orm/sqlite-core');
  const m = await import('@sveltycms/ale/drizzle/sqlite');
  const file = new DatabaseSync(':memory:');
  file.exec(`CREATE TABLE notes (id integer PRIMARY KEY, body text); INSERT INTO notes VALUES (1, '${PLAINTEXT}'), (2, '${PLAINTEXT} two')`);
  // A database whose writes fail, as one whose lock another writer holds past its timeout does.
  const db = drizzle(async (query, params, method) => {
    if (/^update/i.test(query)) throw Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY', errno: 5 });
    const rows = file.prepare(query).all(...params);
    return { rows: method === 'get' ? (rows[0] === undefined ? undefined : Object.values(rows[0])) : rows.map((r) => Object.values(r)) };
  });
  const notes = sqliteTable('notes', { id: integer('id').primaryKey(), body: m.encryptedText('body', { collection: 'notes', keyRing: new ale.KeyRing([SECRET]) }) });
  const e = await m.migratePlaintext(db, { table: notes, key: notes.id, columns: [{ column: notes.body }], tenant: 'acme' }).then(
    () => assert.fail('the batch was written'),
    (err) => err,
  );
  assert.equal(e.code, 'ALE_BATCH_WRITE_FAILED', String(e));
  assert.match(e.message, /code SQLITE_BUSY, errno 5/);
  const shown = `${e.message}\n${e.stack}\n${inspect(e, { depth: 5 })}`;
  for (const f of forbidden) assert.ok(!shown.includes(f), `leaks ${f.slice(0, 8)}…`);
  assert.deepEqual(file.prepare('SELECT body FROM notes ORDER BY id').all().map((r) => r.body), [PLAINTEXT, `${PLAINTEXT} two`], 'nothing written');
  // Every batch operation's failed write is coded the same way: rotateKeys here.
  const old = new ale.KeyRing([OLD_SECRET]);
  file.prepare('UPDATE notes SET body = ?').run(old.encrypt(PLAINTEXT, 'acme', 'notes', 'body'));
  // the column reads with the ring the rotation writes under, the new key first
  const both = new ale.KeyRing([SECRET, OLD_SECRET]);
  const rotating = sqliteTable('notes', { id: integer('id').primaryKey(), body: m.encryptedText('body', { collection: 'notes', keyRing: both }) });
  const r = await m.rotateKeys(db, { table: rotating, key: rotating.id, columns: [{ column: rotating.body }], tenant: 'acme', keyRing: both }).catch((err) => err);
  assert.equal(r?.code, 'ALE_BATCH_WRITE_FAILED', String(r?.stack ?? r));
  assert.match(r.message, /code SQLITE_BUSY, errno 5/);
});
