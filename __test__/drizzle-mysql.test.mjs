// The Drizzle contract on a real MariaDB server, through mysql2.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import mysql from 'mysql2/promise';
import { drizzle } from 'drizzle-orm/mysql2';
import { int, mysqlTable, varchar } from 'drizzle-orm/mysql-core';
import * as mod from '@sveltycms/ale/drizzle/mysql';
import { defineTables, drizzleSuite, tableDdl, TABLES } from './drizzle-suite.mjs';
import { serverUrl } from './servers.mjs';
import { ale, SECRET } from './helpers.mjs';
import { serverExample } from './fixtures/readme-examples.mjs';

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

if (url) {
  test("README: the MySQL / MariaDB example runs (after the contract suite, on the suite's database)", async () => {
    const pool = mysql.createPool({ uri: url, connectionLimit: 1 });
    try {
      const ddl = 'CREATE TABLE users (id INT AUTO_INCREMENT PRIMARY KEY, tenant_id VARCHAR(64) NOT NULL, email LONGTEXT)';
      const { rows, stored } = await serverExample('mysql', { url, ddl, query: async (q) => (await pool.query(q))[0] });
      assert.deepEqual(rows, [{ id: 1, tenantId: 'tenant-1', email: 'a@b.c' }]);
      assert.equal(new ale.KeyRing([SECRET]).decrypt(stored[0], 'tenant-1', 'users', 'email'), 'a@b.c');
    } finally {
      await pool.end();
    }
  });
}
