// The Drizzle contract on a real MariaDB server, through mysql2.
import mysql from 'mysql2/promise';
import { drizzle } from 'drizzle-orm/mysql2';
import { int, mysqlTable, varchar } from 'drizzle-orm/mysql-core';
import * as mod from '@sveltycms/ale/drizzle/mysql';
import { defineTables, drizzleSuite, tableDdl, TABLES } from './drizzle-suite.mjs';
import { serverUrl } from './servers.mjs';

const url = serverUrl('MYSQL_URL');
const ddl = tableDdl({ int: 'INT', text: 'VARCHAR(64)', envelope: 'LONGTEXT', index: 'CHAR(43)', binary: 'LONGBLOB' });
const text = (name) => varchar(name, { length: 64 });

if (url) {
  drizzleSuite({
    name: 'mysql (MariaDB, mysql2)',
    mod,
    binaryType: 'longblob',
    schema: (m, rings) => defineTables(m, { table: mysqlTable, int, text }, rings),
    async connect() {
      const pool = mysql.createPool({ uri: url, connectionLimit: 4 });
      await pool.query('SELECT 1');
      return {
        db: drizzle(pool),
        async reset() {
          await pool.query(`DROP TABLE IF EXISTS ${TABLES.join(', ')}`);
          for (const stmt of ddl) await pool.query(stmt);
        },
        close: () => pool.end(),
      };
    },
  });
}
