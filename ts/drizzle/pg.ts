// Encrypted column types for drizzle-orm/pg-core.
import { customType } from 'drizzle-orm/pg-core';
import { asyncTransact } from './batch.js';
import { dialect } from './dialect.js';

export * from './index.js';

/** SQL type 'text' for envelopes ('bytea' with storage: 'binary'), 'char(43)' for blind indexes. */
export const { encryptedText, encryptedJson, blindIndexColumn, migratePlaintext, rotateKeys, convertStorage } = dialect<'pg'>(customType, { text: 'text', binary: 'bytea', index: 'char(43)' }, asyncTransact);
