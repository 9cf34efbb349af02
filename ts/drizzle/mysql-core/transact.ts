// MySQL's and MariaDB's batch writes: asynchronous transactions that refuse
// a write the server took with warnings. Outside a strict sql_mode
// (STRICT_TRANS_TABLES is the default since MySQL 5.7 and MariaDB 10.2.4,
// but a server or session can drop it) an envelope longer than its column is
// cut to fit, and a character the column's character set lacks becomes '?',
// with a warning and no error: the row was counted as written and would
// never decrypt again.
import { sql } from 'drizzle-orm';
import { codedError } from '../../shared/errors.js';
import { asyncTransaction, type RunTransaction, type Transact } from '../transactions.js';
import { keyText } from '../errors.js';
import { same } from './compare.js';

/** The warning count in mysql2's result of a write (a ResultSetHeader, first of the pair Drizzle hands back); 0 when it says none. */
function warningsOf(result: unknown): number {
  const header = (Array.isArray(result) ? result[0] : result) as { warningStatus?: unknown } | null | undefined;
  const n = header?.warningStatus;
  return typeof n === 'number' ? n : 0;
}

/**
 * The codes of the connection's last warnings. Their messages are left
 * out: one such as 1292's quotes a value compared, and the compare-and-set
 * compares each cell with the plaintext read.
 */
async function warningCodes(tx: { execute(q: unknown): Promise<unknown> }): Promise<string> {
  try {
    const [rows] = (await tx.execute(sql`show warnings`)) as [Array<{ Code?: unknown }>];
    const codes = [...new Set(rows.map((r) => r.Code).filter((c) => typeof c === 'number'))];
    return codes.length === 0 ? '' : ` (codes ${codes.join(', ')})`;
  } catch {
    return '';
  }
}

const refusingWarnings: RunTransaction = (db, write, updates) =>
  asyncTransaction(
    db,
    async (tx, u) => {
      const result = await write(tx, u);
      const n = warningsOf(result);
      if (n === 0) return result;
      throw codedError(
        'ALE_BATCH_WRITE_FAILED',
        `the database took the write of row ${keyText(u.key)} with ${n} warning${n === 1 ? '' : 's'}${await warningCodes(tx)}: outside a strict sql_mode, MySQL and MariaDB cut a value ` +
          "to fit its column (1265) or change characters its character set lacks (1366), and that value would never decrypt. The batch's transaction was rolled back; " +
          `a MyISAM table cannot roll back, and there row ${keyText(u.key)} keeps the damaged value: restore it from a backup. ` +
          'Add STRICT_TRANS_TABLES to sql_mode, and give the column the type the package declares (longtext, longblob, mediumtext for search tokens)',
      );
    },
    updates,
  );

/** MySQL's batch writes: asynchronous transactions that refuse a write taken with warnings, and its comparison. */
export const mysqlTransact: Transact = { run: refusingWarnings, same };
