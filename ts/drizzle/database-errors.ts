// What a database's error may show of itself in the package's messages:
// its codes, and its messages without the query's parameters. Drizzle's
// DrizzleQueryError lists them ("Failed query: … params: …"), and they are
// what the package wrote or compared: plaintext, envelopes, tokens, wrapped
// keys.
import { causes } from '../shared/causes.js';

/**
 * Whether `e` is a failed query's error: Drizzle's, which wraps a driver's
 * and whose message lists the query's parameters, or a driver's own, as
 * bun:sqlite's (drizzle-orm/bun-sqlite passes it on) and those Drizzle
 * before 0.44 passed on: SQLite's codes, mysql2's sqlState, PostgreSQL's
 * SQLSTATE with its severity.
 */
export function isDatabaseError(e: unknown): boolean {
  for (const err of causes(e)) {
    const code = String(err.code ?? '');
    if (String(err.message ?? '').startsWith('Failed query:') || err.name === 'SQLiteError' || /^SQLITE_/.test(code)) return true;
    if (typeof err.sqlState === 'string' || (typeof err.severity === 'string' && /^[0-9A-Z]{5}$/.test(code))) return true;
  }
  return false;
}

/** The codes a database error and the errors it wraps carry (mysql2's code and errno, PostgreSQL's SQLSTATE, SQLite's code), as ` (code X, errno N)`. */
export function codesOf(e: unknown): string {
  const codes = new Set<string>();
  for (const err of causes(e)) {
    for (const name of ['code', 'errno', 'errcode', 'sqlState']) {
      const v = err[name];
      if (typeof v === 'number' || (typeof v === 'string' && /^[A-Za-z0-9_]{1,40}$/.test(v))) codes.add(`${name} ${v}`);
    }
  }
  return codes.size === 0 ? '' : ` (${[...codes].join(', ')})`;
}

/**
 * The first line of each message of `e` and the errors it wraps, outermost
 * first, with Drizzle's own ("Failed query: …", whose next line lists the
 * parameters) left out, and the codes: the driver's message says what went
 * wrong (a missing table, a refused insert) without the values sent.
 */
export function describeDatabaseError(e: unknown): string {
  if (typeof e !== 'object' || e === null) return String(e);
  const lines: string[] = [];
  for (const err of causes(e)) {
    const line = String(err.message ?? '').split('\n')[0];
    if (line !== '' && !line.startsWith('Failed query:') && !lines.includes(line)) lines.push(line);
  }
  return `${lines.join(' <- ') || 'a database error'}${codesOf(e)}`;
}
