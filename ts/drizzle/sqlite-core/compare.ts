// How SQLite compares a cell in the batch operations' compare-and-set: as
// the value read, byte for byte.
import { sql, type SQL } from 'drizzle-orm';
import { sqliteTransaction, type Transact } from '../transactions.js';
import type { Cell } from '../operations.js';

/**
 * A column declared COLLATE NOCASE or RTRIM (an e-mail column of a table
 * made before the package) compares by that collation: migratePlaintext's
 * compare-and-set took a row the application had changed only in case or
 * trailing spaces for the plaintext it read, and overwrote the change. An
 * explicit COLLATE on one side decides the comparison.
 */
function same(column: unknown, value: Cell): SQL {
  return sql`${column} = ${value} collate binary`;
}

/** SQLite's batch writes: its drivers' transactions, and its comparison. */
export const sqliteTransact: Transact = { run: sqliteTransaction, same };
