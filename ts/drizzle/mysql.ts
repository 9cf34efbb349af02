// Encrypted column types for drizzle-orm/mysql-core.
import { customType } from 'drizzle-orm/mysql-core';
import { asyncTransact } from './batch.js';
import { dialect } from './dialect.js';

export * from './index.js';

/** SQL type 'longtext' for envelopes ('longblob' with storage: 'binary'), 'char(43)' for blind indexes. */
export const { encryptedText, encryptedJson, blindIndexColumn, migratePlaintext, rotateKeys, convertStorage } = dialect<'mysql'>(customType, { text: 'longtext', binary: 'longblob', index: 'char(43)' }, asyncTransact);
