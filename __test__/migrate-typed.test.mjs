// migratePlaintext into a typed column (encryptedNumber, encryptedBigint,
// encryptedDate): a plaintext cell in the column's own text is sealed and
// reads back as its JavaScript type; one in any other text (which its reads
// could not parse, or would parse as another value) is refused before it is sealed, with the column and row named and no value
// quoted, and stays as it was. Sealed, it would have failed every later read
// of its row, and every range or search page that reads it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { asc, sql } from 'drizzle-orm';
import { integer, sqliteTable } from 'drizzle-orm/sqlite-core';
import { encryptedBigint, encryptedDate, encryptedNumber, migratePlaintext, withTenant } from '@sveltycms/ale/drizzle/sqlite';
import { openSqlite } from '../bench/sqlite.mjs';
import { ale, SECRET } from './helpers.mjs';

const keyRing = new ale.KeyRing([SECRET]);
const options = { collection: 'measures', keyRing };
const t = sqliteTable('measures', {
  id: integer('id').primaryKey(),
  amount: encryptedNumber('amount', options),
  count: encryptedBigint('count', options),
  at: encryptedDate('at', options),
});
const migrate = (db, column) => migratePlaintext(db, { table: t, key: t.id, columns: [{ column }], tenant: 'acme' });

test("migratePlaintext seals a typed column's plaintext in its own text, and refuses text its reads could not parse, naming the row and quoting no value", async () => {
  const s = await openSqlite(':memory:', { wal: false });
  try {
    s.exec('CREATE TABLE measures (id INTEGER PRIMARY KEY, amount TEXT, count TEXT, at TEXT)');
    // the rows go in raw, as legacy plaintext
    await s.db.run(sql`INSERT INTO measures VALUES (1, '-1.5', '-9007199254740993', '1969-12-31T23:59:59.999Z'), (2, '1e+21', '0', '2024-01-01T00:00:00.000Z')`);
    for (const column of [t.amount, t.count, t.at]) assert.equal((await migrate(s.db, column)).written, 2, column.name);
    const rows = await withTenant('acme', () => s.db.select().from(t).orderBy(asc(t.id)));
    assert.deepEqual(rows, [
      { id: 1, amount: -1.5, count: -9007199254740993n, at: new Date(-1) },
      { id: 2, amount: 1e21, count: 0n, at: new Date('2024-01-01T00:00:00.000Z') },
    ]);
    for (const [column, bad] of [
      [t.at, '2024-01-31'],
      [t.amount, '1,5'],
      [t.amount, '2e3'],
      [t.count, '12.0'],
      // text the reads parse, as another value than it says: digits past 2^53, a day that is not in the calendar, zeros
      [t.amount, '9007199254740993'],
      [t.amount, '12.50'],
      [t.amount, '1e-400'],
      [t.count, '-0'],
      [t.count, '007'],
      [t.at, '2023-02-29T10:00:00.000Z'],
      [t.at, '2024-01-01T24:00:00.000Z'],
    ]) {
      await s.db.run(sql`INSERT INTO measures (id, ${sql.identifier(column.name)}) VALUES (3, ${bad})`);
      const e = await migrate(s.db, column).then(() => null, (error) => error);
      assert.equal(e?.code, 'ALE_INVALID_INPUT', `${column.name}: ${e}`);
      assert.match(e.message, new RegExp(`column "${column.name}".*row 3`));
      assert.ok(!e.message.includes(bad), e.message);
      assert.equal(s.all(`SELECT ${column.name} AS v FROM measures WHERE id = 3`)[0].v, bad, 'left as it was');
      await s.db.run(sql`DELETE FROM measures WHERE id = 3`);
    }
  } finally {
    s.close();
  }
});
