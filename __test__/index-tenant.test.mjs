// An index column whose `tenant` is a fixed id binds its tokens to it, as an
// encrypted column binds its values: a batch that would write or read its
// tokens under another tenant (a tenant column, another id) is refused
// before a row is read. Tokens written under each row's tenant would be
// missed by every query, which asks under the fixed one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { encryptedDate, encryptedText, rangeIndexColumn, reindexSearch, searchIndexColumn, searchLeakage } from '@sveltycms/ale/drizzle/sqlite';
import { openSqlite } from '../bench/sqlite.mjs';
import { ale, SECRET } from './helpers.mjs';

const keyRing = new ale.KeyRing([SECRET]);
const t = sqliteTable('notes', {
  id: integer('id').primaryKey(),
  tenantId: text('tenant_id'),
  body: encryptedText('body', { collection: 'notes', keyRing }),
  bodySearch: searchIndexColumn('body_search', { collection: 'notes', field: 'body', tenant: 'main', keyRing }),
  at: encryptedDate('at', { collection: 'notes', keyRing }),
  atRange: rangeIndexColumn('at_range', { type: 'date', collection: 'notes', field: 'at', tenant: 'main', keyRing }),
});

test("a batch over an index column with a fixed tenant is refused under another tenant, and runs under its own", async () => {
  const s = await openSqlite(':memory:', { wal: false });
  try {
    s.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, tenant_id TEXT, body TEXT, body_search TEXT, at TEXT, at_range TEXT)');
    for (const [index, source] of [
      [t.bodySearch, t.body],
      [t.atRange, t.at],
    ]) {
      for (const [label, tenant] of [
        ['a tenant column', { column: t.tenantId }],
        ['another tenant', 'acme'],
      ]) {
        const runs = [() => reindexSearch(s.db, { table: t, key: t.id, tenant, columns: [{ source, index }] }), () => searchLeakage(s.db, { table: t, key: t.id, index, tenant })];
        for (const run of runs) {
          const e = await run().then(() => null, (error) => error);
          assert.equal(e?.code, 'ALE_INVALID_CONTEXT', `${index.name} under ${label}: ${e}`);
          assert.match(e.message, new RegExp(`column "${index.name}" binds every value to tenant "main"`));
        }
      }
      assert.deepEqual(await reindexSearch(s.db, { table: t, key: t.id, tenant: 'main', columns: [{ source, index }] }).then((p) => p.scanned), 0);
    }
  } finally {
    s.close();
  }
});
