// The tenant-key contract on a real MariaDB server, through mysql2.
import mysql from 'mysql2/promise';
import { drizzle } from 'drizzle-orm/mysql2';
import { int, mysqlTable, varchar } from 'drizzle-orm/mysql-core';
import * as mod from '@sveltycms/ale/drizzle/mysql';
import { tenantKeysSuite } from './tenant-keys-suite.mjs';
import { serverUrl } from './servers.mjs';

const url = serverUrl('MYSQL_URL');

if (url) {
  tenantKeysSuite({
    name: 'mysql (MariaDB, mysql2)',
    mod,
    builders: { table: mysqlTable, int, text: (name) => varchar(name, { length: 64 }) },
    types: { int: 'INT', text: 'VARCHAR(64)', envelope: 'LONGTEXT', index: 'CHAR(43)', binary: 'LONGBLOB' },
    async connect() {
      const pool = mysql.createPool({ uri: url, connectionLimit: 4 });
      return { db: drizzle(pool), query: async (q) => (await pool.query(q))[0], close: () => pool.end(), target: { dialect: 'mysql', url } };
    },
  });
}
