// One module state for the ESM and CommonJS builds. An app may load both (its
// own code as ESM, a schema or a dependency through require()): the tenant
// scope, the failure scope, the legacy counters and the error classes must
// then exist once. Also: every dialect module re-exports the same API.
import { describe, test, before, beforeEach, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { eq, sql } from 'drizzle-orm';
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import * as esm from '@sveltycms/ale/drizzle';
import * as esmSqlite from '@sveltycms/ale/drizzle/sqlite';
import * as esmPg from '@sveltycms/ale/drizzle/pg';
import * as esmMysql from '@sveltycms/ale/drizzle/mysql';
import { openSqlite } from '../bench/sqlite.mjs';
import { ale, flipBit, SECRET } from './helpers.mjs';

const require = createRequire(import.meta.url);
const cjs = require('@sveltycms/ale/drizzle');
const cjsSqlite = require('@sveltycms/ale/drizzle/sqlite');

/** A users table whose columns come from `mod`. */
const usersOf = (mod, legacy) =>
  sqliteTable('users', {
    id: integer('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    email: mod.encryptedText('email', { collection: 'users', ...legacy }),
    emailIndex: mod.blindIndexColumn('email_index', { collection: 'users', field: 'email' }),
  });

describe('drizzle: the ESM and CommonJS builds share one state', () => {
  const cjsUsers = usersOf(cjsSqlite);
  const esmUsers = usersOf(esmSqlite);
  let s;
  let db;
  const codeOf = (promise) => promise.then(() => 'no error', (e) => e.code);

  before(async () => {
    ale.initKeyRing([SECRET]);
    s = await openSqlite(':memory:', { wal: false });
    db = s.db;
  });
  beforeEach(() => {
    s.exec('DROP TABLE IF EXISTS users');
    s.exec('CREATE TABLE users (id INTEGER PRIMARY KEY, tenant_id TEXT NOT NULL, email TEXT, email_index TEXT)');
  });
  after(() => s?.close());

  test('both builds are loaded, as two module instances', () => {
    assert.notEqual(cjsSqlite.encryptedText, esmSqlite.encryptedText);
    assert.notEqual(cjs.withTenant, esm.withTenant);
  });

  test("one build's withTenant scopes the other's columns", async () => {
    await esm.withTenant('acme', () => db.insert(cjsUsers).values({ id: 1, tenantId: 'acme', email: 'a@acme.test', emailIndex: 'a@acme.test' }));
    await cjs.withTenant('acme', () => db.insert(esmUsers).values({ id: 2, tenantId: 'acme', email: 'b@acme.test' }));
    assert.deepEqual((await esm.withTenant('acme', () => db.select().from(cjsUsers).orderBy(cjsUsers.id))).map((r) => r.email), ['a@acme.test', 'b@acme.test']);
    assert.deepEqual((await cjs.withTenant('acme', () => db.select().from(esmUsers).orderBy(esmUsers.id))).map((r) => r.email), ['a@acme.test', 'b@acme.test']);
    assert.equal(await esm.withTenant('acme', () => cjs.currentTenant()), 'acme');
    const found = await esm.withTenant('acme', () => db.select({ id: cjsUsers.id }).from(cjsUsers).where(esm.matchBlindIndex(cjsUsers.emailIndex, 'a@acme.test')));
    assert.deepEqual(found, [{ id: 1 }]);
  });

  test("one build's readWithFailures reports the other's failed cells; AleColumnError is one class", async () => {
    await esm.withTenant('acme', () => db.insert(cjsUsers).values([{ id: 1, tenantId: 'acme', email: 'a@acme.test' }, { id: 2, tenantId: 'acme', email: 'b@acme.test' }]));
    const [{ v }] = await db.select({ v: sql`${cjsUsers.email}` }).from(cjsUsers).where(eq(cjsUsers.id, 2));
    await db.update(cjsUsers).set({ email: sql`${flipBit(v, 3, 0)}` }).where(eq(cjsUsers.id, 2));
    const { rows, failures } = await esm.withTenant('acme', () => esm.readWithFailures(() => db.select().from(cjsUsers).orderBy(cjsUsers.id), { key: 'id' }));
    assert.deepEqual(rows.map((r) => r.email), ['a@acme.test', null]);
    assert.deepEqual(failures.map((f) => [f.key, f.code]), [[2, 'ALE_AUTH_FAILED']]);
    assert.equal(esm.AleColumnError, cjs.AleColumnError);
    assert.equal(esm.AleReadFailure, cjs.AleReadFailure);
    const err = await esm.withTenant('acme', () => db.select().from(cjsUsers)).catch((e) => e);
    assert.ok(err instanceof esm.AleColumnError);
  });

  test('the legacy counters and the first-read warning are shared', async () => {
    const collection = `dual-legacy-${Math.random().toString(36).slice(2)}`;
    const legacy = { collection, legacyPlaintext: true };
    const [cjsLegacy, esmLegacy] = [usersOf(cjsSqlite, legacy), usersOf(esmSqlite, legacy)];
    await db.insert(cjsLegacy).values({ id: 1, tenantId: 'acme', email: sql`${'old@plain.test'}` });
    const warnings = [];
    const onWarning = (w) => w.message.includes(collection) && warnings.push(w.code);
    process.on('warning', onWarning);
    try {
      for (const table of [cjsLegacy, esmLegacy]) assert.equal((await esm.withTenant('acme', () => db.select().from(table)))[0].email, 'old@plain.test');
      await new Promise((r) => setTimeout(r, 10));
    } finally {
      process.off('warning', onWarning);
    }
    assert.equal(esm.legacyPlaintextReads()[`${collection}.email`], 2);
    assert.equal(cjs.legacyPlaintextReads()[`${collection}.email`], 2);
    assert.deepEqual(warnings, ['ALE_LEGACY_PLAINTEXT']);
  });
});

test("every dialect module, in both builds, re-exports all of @sveltycms/ale/drizzle and adds its columns (text, JSON, typed, blind, search and range indexes), batch helpers (migratePlaintext, rotateKeys, convertStorage), tenant key store and search index SQL, SQLite's searchHits and searchIndexCheck and MySQL's rangeTokenTableSql and rangeTokenTableCheck", () => {
  const own = ['aleKeys', 'aleKeysTable', 'blindIndexColumn', 'convertStorage', 'convertToTenantKeys', 'encryptedBigint', 'encryptedDate', 'encryptedJson', 'encryptedNumber', 'encryptedText', 'migratePlaintext', 'rangeIndexColumn', 'reindexSearch', 'rotateKeys', 'searchIndexColumn', 'searchIndexSql', 'searchLeakage', 'tenantKeys'];
  const expected = [...Object.keys(esm), ...own].sort();
  assert.ok(expected.includes('matchBlindIndex'));
  assert.deepEqual(Object.keys(cjs).sort(), Object.keys(esm).sort());
  const modules = { esmSqlite, esmPg, esmMysql, cjsSqlite, cjsPg: require('@sveltycms/ale/drizzle/pg'), cjsMysql: require('@sveltycms/ale/drizzle/mysql') };
  // What one dialect alone has: SQLite's FTS5-driven pages, MySQL's token tables.
  const only = { esmSqlite: ['searchHits', 'searchHitsPlaceholder', 'searchIndexCheck'], cjsSqlite: ['searchHits', 'searchHitsPlaceholder', 'searchIndexCheck'], esmMysql: ['rangeTokenTableSql', 'rangeTokenTableCheck'], cjsMysql: ['rangeTokenTableSql', 'rangeTokenTableCheck'] };
  for (const [name, mod] of Object.entries(modules)) {
    // a CommonJS module seen through import() may carry `default`; require() gives the exports object
    assert.deepEqual(Object.keys(mod).filter((k) => k !== 'default').sort(), [...expected, ...(only[name] ?? [])].sort(), name);
    for (const key of Object.keys(esm)) assert.equal(typeof mod[key], typeof esm[key], `${name}.${key}`);
  }
});

test('searchHits and searchHitsPlaceholder of one build take the columns and conditions of the other, and find the same rows', async () => {
  const ring = new ale.KeyRing([SECRET]);
  const s = await openSqlite(':memory:', { wal: false });
  try {
    s.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT, body_search TEXT)');
    const notesOf = (mod) =>
      sqliteTable('notes', {
        id: integer('id').primaryKey(),
        body: mod.encryptedText('body', { collection: 'notes', tenant: 'acme', keyRing: ring }),
        bodySearch: mod.searchIndexColumn('body_search', { collection: 'notes', field: 'body', tenant: 'acme', keyRing: ring, fts: 'notes_fts' }),
      });
    const [cjsNotes, esmNotes] = [notesOf(cjsSqlite), notesOf(esmSqlite)];
    for (const stmt of esmSqlite.searchIndexSql(esmNotes, esmNotes.bodySearch, 'notes_fts')) s.exec(stmt);
    for (const [id, body] of [[1, 'express delivery'], [2, 'slow delivery'], [3, 'express mail']]) await s.db.insert(esmNotes).values({ id, body, bodySearch: body });
    for (const [made, hitsFrom] of [[cjsSqlite, esmSqlite], [esmSqlite, cjsSqlite]]) {
      const notes = made === cjsSqlite ? cjsNotes : esmNotes;
      const where = made.searchWords(notes.bodySearch, 'express');
      const hits = hitsFrom.searchHits(where);
      const ids = (await s.db.select({ id: notes.id }).from(hits.table).innerJoin(notes, hits.on).where(hits.match).orderBy(hits.rowid)).map((r) => r.id);
      assert.deepEqual(ids, [1, 3]);
      const placed = hitsFrom.searchHitsPlaceholder(notes.bodySearch);
      const prepared = s.db.select({ id: notes.id }).from(placed.table).innerJoin(notes, placed.on).where(placed.match).orderBy(placed.rowid).prepare();
      assert.deepEqual((await prepared.all({ match: placed.matchOf(made.searchWords(notes.bodySearch, 'delivery')) })).map((r) => r.id), [1, 2]);
    }
  } finally {
    s.close();
  }
});

test("orderedPage of one build takes the other build's range condition as `within`", async () => {
  const ring = new ale.KeyRing([SECRET]);
  const s = await openSqlite(':memory:', { wal: false });
  try {
    s.exec('CREATE TABLE prices (id INTEGER PRIMARY KEY, amount TEXT, amount_range TEXT)');
    const on = { collection: 'prices', tenant: 'acme', keyRing: ring };
    const prices = sqliteTable('prices', {
      id: integer('id').primaryKey(),
      amount: cjsSqlite.encryptedNumber('amount', on),
      amountRange: cjsSqlite.rangeIndexColumn('amount_range', { ...on, field: 'amount', type: 'number' }),
    });
    for (const [id, amount] of [[1, 5], [2, 50], [3, 500], [4, 70]]) await s.db.insert(prices).values({ id, amount, amountRange: amount });
    for (const [made, paged] of [[cjsSqlite, esmSqlite], [esmSqlite, cjsSqlite]]) {
      const page = await paged.orderedPage((where, limit, offset) => s.db.select({ id: prices.id, amount: prices.amount }).from(prices).where(where).orderBy(prices.id).limit(limit).offset(offset), {
        column: prices.amountRange,
        value: (row) => row.amount,
        limit: 10,
        within: made.rangeGt(prices.amountRange, 10),
      });
      assert.deepEqual(page.rows.map((r) => r.id), [2, 4, 3]);
    }
  } finally {
    s.close();
  }
});

test("the SveltyCMS drop-in's hook and cached ring are one for both builds: a hook set through one hears the other's failures, and a reset through one drops the other's ring", async () => {
  const esmDropIn = await import('@sveltycms/ale/sveltycms');
  const cjsDropIn = require('@sveltycms/ale/sveltycms');
  const saved = process.env.ENCRYPTION_KEY;
  const ctx = { tenantId: 'acme', collectionId: 'posts' };
  const heard = [];
  try {
    process.env.ENCRYPTION_KEY = SECRET;
    esmDropIn.resetFieldEncryptionKeyCache();
    esmDropIn.setFieldEncryptionLogger((f) => heard.push(f.code));
    const sealed = cjsDropIn.encryptFieldValueSync('x', ctx, 'title');
    assert.equal(cjsDropIn.decryptFieldValueSync(sealed, { ...ctx, tenantId: 'other' }, 'title'), null);
    assert.deepEqual(heard, ['ALE_AUTH_FAILED'], 'the hook set through the ESM build heard the CommonJS build');
    // the ESM build holds its ring; a new key, and a reset through the CommonJS build: the ESM build seals under the new one
    assert.equal(ale.KeyRing.fromEnv().decrypt(esmDropIn.encryptFieldValueSync('w', ctx, 'title'), 'acme', 'posts', 'title'), '"w"');
    process.env.ENCRYPTION_KEY = `${SECRET}-rotated`;
    cjsDropIn.resetFieldEncryptionKeyCache();
    const resealed = esmDropIn.encryptFieldValueSync('y', ctx, 'title');
    assert.equal(new ale.KeyRing([`${SECRET}-rotated`]).decrypt(resealed, 'acme', 'posts', 'title'), '"y"');
  } finally {
    if (saved === undefined) delete process.env.ENCRYPTION_KEY;
    else process.env.ENCRYPTION_KEY = saved;
    esmDropIn.setFieldEncryptionLogger(undefined);
    esmDropIn.resetFieldEncryptionKeyCache();
  }
});
