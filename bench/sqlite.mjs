// Opens SQLite through Drizzle with each driver SveltyCMS uses: bun:sqlite
// (drizzle-orm/bun-sqlite) under Bun, node:sqlite's DatabaseSync behind
// drizzle-orm/sqlite-proxy under Node (the CMS's adapter on each runtime),
// and better-sqlite3 as a second Node driver. Shared by the bench and the tests.
export const runtimeName = process.versions.bun ? 'bun' : 'node';

/** The drivers this runtime has, the CMS's own first. */
export const SQLITE_DRIVERS = process.versions.bun ? ['bun:sqlite'] : ['node:sqlite', 'better-sqlite3'];

/** A driver whose Drizzle statements run synchronously, for code that times one without awaiting. */
export const SYNC_DRIVER = process.versions.bun ? 'bun:sqlite' : 'better-sqlite3';

/**
 * @param {string} file
 * @param {{ wal?: boolean, driver?: string, extension?: string }} [options] driver: one of SQLITE_DRIVERS (default: the CMS's); extension: a SQLite loadable extension to load (bench/experiments/fts5-tokenizer.mjs)
 * @returns {Promise<{ db: any, exec: (sql: string) => void, all: (sql: string, ...params: any[]) => any[], close: () => void, driver: string, sqliteVersion: string }>}
 */
export async function openSqlite(file, { wal = true, driver = SQLITE_DRIVERS[0], extension } = {}) {
  if (!SQLITE_DRIVERS.includes(driver)) throw new Error(`${driver} is not a SQLite driver of ${runtimeName} (${SQLITE_DRIVERS.join(', ')})`);
  const { client, db, label } = await OPEN[driver](file, extension !== undefined);
  // each driver names it loadExtension; node:sqlite's needs allowExtension at open
  if (extension !== undefined) client.loadExtension(extension);
  const exec = (sql) => client.exec(sql);
  // bun:sqlite's close() leaves the connection open, a zombie, while any of
  // its statements is unfinalized (sqlite3_close_v2): finalize each here.
  // The other drivers finalize theirs when the database closes.
  const all = (sql, ...params) => {
    const statement = client.prepare(sql);
    try {
      return statement.all(...params);
    } finally {
      statement.finalize?.();
    }
  };
  // Wait for a lock as an application would, rather than fail at once
  // (bun:sqlite and node:sqlite default to no wait): a test reopens a file
  // right after other connections, one of them killed, had it open, and a
  // CI run saw the WAL switch refused there with SQLITE_BUSY.
  exec('PRAGMA busy_timeout = 5000');
  if (wal) {
    exec('PRAGMA journal_mode = WAL');
    exec('PRAGMA synchronous = NORMAL');
  }
  const sqliteVersion = all('select sqlite_version() as v')[0].v;
  // `client`: the driver's own connection, for what Drizzle does not reach (a statement left mid-step).
  return { db, exec, all, client, close: () => client.close(), driver: label, sqliteVersion };
}

const OPEN = {
  async 'bun:sqlite'(file) {
    const { Database } = await import('bun:sqlite');
    const { drizzle } = await import('drizzle-orm/bun-sqlite');
    const client = new Database(file);
    return { client, db: drizzle(client), label: 'bun:sqlite' };
  },
  async 'better-sqlite3'(file) {
    const { default: Database } = await import('better-sqlite3');
    const { drizzle } = await import('drizzle-orm/better-sqlite3');
    const client = new Database(file);
    return { client, db: drizzle(client), label: 'better-sqlite3' };
  },
  async 'node:sqlite'(file, allowExtension) {
    const { DatabaseSync } = await import('node:sqlite');
    const { drizzle } = await import('drizzle-orm/sqlite-proxy');
    const client = new DatabaseSync(file, { allowExtension });
    return { client, db: drizzle(nodeSqliteProxy(client)), label: 'node:sqlite (sqlite-proxy)' };
  },
};

/**
 * The sqlite-proxy callback over a DatabaseSync, as SveltyCMS wires it:
 * Drizzle sends SQL, parameters and a method, and takes rows back as arrays
 * of values. Statements are prepared once per SQL text.
 */
export function nodeSqliteProxy(client) {
  const statements = new Map();
  const prepare = (sql) => {
    let statement = statements.get(sql);
    if (!statement) {
      statement = client.prepare(sql);
      statement.setReturnArrays(true);
      statements.set(sql, statement);
    }
    return statement;
  };
  return async (sql, params, method) => {
    const statement = prepare(sql);
    if (method === 'run') {
      statement.run(...params);
      return { rows: [] };
    }
    if (method === 'get') return { rows: statement.get(...params) ?? [] };
    return { rows: statement.all(...params) };
  };
}
