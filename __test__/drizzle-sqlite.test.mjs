// The Drizzle contract on real SQLite in WAL mode, through every driver
// SveltyCMS uses: node:sqlite behind drizzle-orm/sqlite-proxy and
// better-sqlite3 under Node, bun:sqlite under Bun.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import * as mod from '@sveltycms/ale/drizzle/sqlite';
import { openSqlite, SQLITE_DRIVERS } from '../bench/sqlite.mjs';
import { defineTables, drizzleSuite, tableDdl, TABLES } from './drizzle-suite.mjs';

const ddl = tableDdl({ int: 'INTEGER', text: 'TEXT', envelope: 'TEXT', index: 'TEXT', binary: 'BLOB' });

for (const driver of SQLITE_DRIVERS) drizzleSuite({
  name: `sqlite (${driver}, WAL)`,
  mod,
  binaryType: 'blob',
  textInBlob: true,
  schema: (m, rings) => defineTables(m, { table: sqliteTable, int: integer, text }, rings),
  async connect() {
    const dir = mkdtempSync(join(tmpdir(), 'ale-sqlite-'));
    const s = await openSqlite(join(dir, 'test.db'), { driver });
    if (s.all('PRAGMA journal_mode')[0].journal_mode !== 'wal') throw new Error('WAL mode is not on');
    return {
      db: s.db,
      async reset() {
        for (const name of TABLES) s.exec(`DROP TABLE IF EXISTS ${name}`);
        for (const stmt of ddl) s.exec(stmt);
      },
      close() {
        s.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
});
