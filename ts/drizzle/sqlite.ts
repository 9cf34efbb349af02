// Encrypted column types for drizzle-orm/sqlite-core.
import { customType } from 'drizzle-orm/sqlite-core';
import { sqliteTransact } from './batch.js';
import { dialect } from './dialect.js';

export * from './index.js';

/** SQL type 'text' for envelopes and for blind indexes; 'blob' for envelopes with storage: 'binary'. */
export const { encryptedText, encryptedJson, blindIndexColumn, migratePlaintext, rotateKeys, convertStorage } = dialect<'sqlite'>(customType, { text: 'text', binary: 'blob', index: 'text' }, sqliteTransact);
