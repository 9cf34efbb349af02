// Opens SQLite through Drizzle on whichever runtime is running: better-sqlite3
// under Node, bun:sqlite under Bun. Shared by the bench and the tests.
export const runtimeName = process.versions.bun ? 'bun' : 'node';

/** @returns {Promise<{ db: any, exec: (sql: string) => void, all: (sql: string) => any[], close: () => void, driver: string, sqliteVersion: string }>} */
export async function openSqlite(file, { wal = true } = {}) {
  let client;
  let db;
  let driver;
  if (process.versions.bun) {
    const { Database } = await import('bun:sqlite');
    const { drizzle } = await import('drizzle-orm/bun-sqlite');
    client = new Database(file);
    db = drizzle(client);
    driver = 'bun:sqlite';
  } else {
    const { default: Database } = await import('better-sqlite3');
    const { drizzle } = await import('drizzle-orm/better-sqlite3');
    client = new Database(file);
    db = drizzle(client);
    driver = 'better-sqlite3';
  }
  const exec = (sql) => client.exec(sql);
  const all = (sql) => client.prepare(sql).all();
  if (wal) {
    exec('PRAGMA journal_mode = WAL');
    exec('PRAGMA synchronous = NORMAL');
  }
  const sqliteVersion = all('select sqlite_version() as v')[0].v;
  return { db, exec, all, close: () => client.close(), driver, sqliteVersion };
}
