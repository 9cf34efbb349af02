// A batch operation's failed writes, reported without their parameters.
// migratePlaintext's compare-and-set sends the plaintext it read, and a
// failed query's error lists the query's parameters (Drizzle's
// DrizzleQueryError message, mysql2's `sql`), which would put that
// plaintext in a message; the others' hold envelopes and tokens, and get
// the same coded error.
import { codedError } from '../shared/errors.js';
import { codesOf } from './database-errors.js';
import { keyText } from './errors.js';
import type { BatchDriver } from './operations.js';

/**
 * `driver`, whose failed writes throw ALE_BATCH_WRITE_FAILED with what can
 * be shown: the database's error codes and the batch's first and last row
 * keys. A coded error of the package's own goes through as it is.
 */
export function withoutParameters(driver: BatchDriver): BatchDriver {
  return {
    ...driver,
    async apply(updates) {
      try {
        return await driver.apply(updates);
      } catch (e) {
        if (typeof (e as { code?: unknown })?.code === 'string' && (e as { code: string }).code.startsWith('ALE_')) throw e;
        const rows = updates.length === 0 ? '' : `, rows ${keyText(updates[0].key)} to ${keyText(updates[updates.length - 1].key)}`;
        throw codedError(
          'ALE_BATCH_WRITE_FAILED',
          `a batch's write failed in the database${codesOf(e)}${rows}. Its transaction was rolled back where the table's engine can (not MyISAM), ` +
            "and a rerun resumes from the rows not yet done, unless the same error comes back (the codes say which). The database's message is left out: the query compared each row with the values it read (migratePlaintext: the plaintext), which the message would show.",
        );
      }
    },
  };
}
