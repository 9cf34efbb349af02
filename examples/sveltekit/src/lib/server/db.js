// SQLite as SveltyCMS opens it: bun:sqlite through drizzle-orm/bun-sqlite
// under Bun, node:sqlite's DatabaseSync behind drizzle-orm/sqlite-proxy
// under Node. The file is DATABASE_FILE (default cms.db). The tenant key
// store declared in the schema is bound here, to the database and to the KEK
// (ALE_KEK), at start-up rather than at import.
import { DDL, keys } from './schema.js';

// bun:sqlite and node:sqlite wait 0 ms for a lock another process holds; a
// few seconds let processes that start together create their tables in turn.
const BUSY_TIMEOUT = 'PRAGMA busy_timeout = 5000';

let opened;
let ready;

/** The Drizzle database, opened on first use, with the key store bound to it. */
export function database() {
  // Opened once: a failure here (the file cannot be opened) fails every request until a restart, as the key store
  // stays bound to the database it was given.
  opened ??= open(process.env.DATABASE_FILE ?? 'cms.db').then((opened) => {
    keys.bind(opened.db, { kek: process.env.ALE_KEK });
    return opened;
  });
  // keys.ready() can fail for a moment (another process creating the key table): the next request tries again.
  ready ??= opened.then(async (opened) => (await keys.ready(), opened)).catch((e) => {
    ready = undefined;
    throw e;
  });
  return ready;
}

async function open(file) {
  if (process.versions.bun) {
    // A specifier in a variable: Vite leaves it to the runtime.
    const bunSqlite = 'bun:sqlite';
    const { Database } = await import(/* @vite-ignore */ bunSqlite);
    const { drizzle } = await import('drizzle-orm/bun-sqlite');
    const client = new Database(file);
    client.exec(BUSY_TIMEOUT);
    client.exec(DDL);
    return { db: drizzle(client), driver: 'bun:sqlite' };
  }
  const { DatabaseSync } = await import('node:sqlite');
  const { drizzle } = await import('drizzle-orm/sqlite-proxy');
  const client = new DatabaseSync(file);
  client.exec(BUSY_TIMEOUT);
  client.exec(DDL);
  const statements = new Map();
  const db = drizzle(async (sql, params, method) => {
    let statement = statements.get(sql);
    if (!statement) {
      statement = client.prepare(sql);
      statement.setReturnArrays(true);
      statements.set(sql, statement);
    }
    if (method === 'run') {
      statement.run(...params);
      return { rows: [] };
    }
    if (method === 'get') return { rows: statement.get(...params) ?? [] };
    return { rows: statement.all(...params) };
  });
  return { db, driver: 'node:sqlite (sqlite-proxy)' };
}
