// How PostgreSQL compares a cell in the batch operations' compare-and-set:
// as the value read, byte for byte.
import { sql, type SQL } from 'drizzle-orm';
import { asyncTransaction, type Transact } from '../transactions.js';
import type { Cell } from '../operations.js';

/**
 * A citext column, or one of a case-insensitive ICU collation (an e-mail
 * column of a table made before the package), compares regardless of
 * case: migratePlaintext's compare-and-set took a row the application had
 * changed only so for the plaintext it read, and overwrote the change. As
 * text in the "C" collation, two values are equal only when their bytes
 * are. concat() spells the column as it is read: a char(n) value keeps
 * its padding, which a ::text cast drops, so the value compared is the one
 * read. Bytes (bytea) compare as bytes already.
 */
function same(column: unknown, value: Cell): SQL {
  if (typeof value !== 'string') return sql`${column} = ${value}`;
  // concat(NULL) is '': a NULL cell must not match an expected ''.
  return sql`(${column} is not null and concat(${column}) collate "C" = ${value}::text)`;
}

/** PostgreSQL's batch writes: asynchronous transactions, and its comparison. */
export const pgTransact: Transact = { run: asyncTransaction, same };
