// How MySQL and MariaDB compare a cell in the batch operations'
// compare-and-set: as the value read, character for character.
import { sql, type SQL } from 'drizzle-orm';
import type { Cell } from '../operations.js';

/**
 * A text column compares by its collation, and the defaults ignore case and
 * accents, and the PAD SPACE ones trailing spaces: migratePlaintext's
 * compare-and-set took a row the application had changed only so for the
 * plaintext it read, and overwrote the change with that plaintext's
 * envelope. So text is compared in utf8mb4_bin, which both servers have
 * (converted from the column's own character set, latin1 included, where a
 * cast to bytes would compare latin1 bytes with UTF-8 ones and never
 * match), and by length, since utf8mb4_bin pads too. Bytes (a binary
 * column) compare as bytes already.
 */
export function same(column: unknown, value: Cell): SQL {
  if (typeof value !== 'string') return sql`${column} = ${value}`;
  return sql`(${column} = convert(${value} using utf8mb4) collate utf8mb4_bin and char_length(${column}) = char_length(${value}))`;
}
