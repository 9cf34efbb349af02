// Type tests, checked by `tsc -p tsconfig.typetest.json` (part of npm test).
// Each `Expect<Equal<…>>` and `@ts-expect-error` is an assertion.
import { integer, sqliteTable } from 'drizzle-orm/sqlite-core';
import { pgTable, serial } from 'drizzle-orm/pg-core';
import { int, mysqlTable } from 'drizzle-orm/mysql-core';
import * as sqlite from '@sveltycms/ale/drizzle/sqlite';
import * as pg from '@sveltycms/ale/drizzle/pg';
import * as mysql from '@sveltycms/ale/drizzle/mysql';
import { withTenant } from '@sveltycms/ale/drizzle';
import { KeyRing, encrypt } from '@sveltycms/ale';

type Equal<X, Y> = (<T>() => T extends X ? 1 : 2) extends <T>() => T extends Y ? 1 : 2 ? true : false;
type Expect<T extends true> = T;

const opts = { collection: 'users' };
const s = sqliteTable('s', { id: integer('id').primaryKey(), doc: sqlite.encryptedJson<{ a: number }>('doc', opts), email: sqlite.encryptedText('email', opts).notNull() });
const p = pgTable('p', { id: serial('id').primaryKey(), doc: pg.encryptedJson<{ a: number }>('doc', opts), idx: pg.blindIndexColumn('idx', opts) });
const m = mysqlTable('m', { id: int('id').primaryKey(), doc: mysql.encryptedJson<{ a: number }>('doc', opts), email: mysql.encryptedText('email', opts) });

export type Tests = [
  Expect<Equal<(typeof s.$inferSelect)['doc'], { a: number } | null>>,
  Expect<Equal<(typeof s.$inferSelect)['email'], string>>,
  Expect<Equal<(typeof p.$inferSelect)['doc'], { a: number } | null>>,
  Expect<Equal<(typeof p.$inferSelect)['idx'], string | null>>,
  Expect<Equal<(typeof m.$inferSelect)['doc'], { a: number } | null>>,
  Expect<Equal<(typeof m.$inferInsert)['email'], string | null | undefined>>,
  Expect<Equal<ReturnType<KeyRing['encrypt']>, string>>,
  Expect<Equal<ReturnType<KeyRing['decryptAsync']>, Promise<string>>>,
  Expect<Equal<ReturnType<typeof encrypt>, string>>,
  Expect<Equal<ReturnType<typeof withTenant<number>>, number>>,
];

// @ts-expect-error collection is required
sqlite.encryptedText('email', {});
// @ts-expect-error the tenant resolver must return a string
pg.encryptedText('email', { collection: 'c', tenant: () => 42 });
// @ts-expect-error a JSON column of { a: number } does not take a string
s.$inferInsert.doc = 'text';
