// Encrypted column types, batch helpers and the tenant key store for drizzle-orm/sqlite-core.
import { customType } from 'drizzle-orm/sqlite-core';
import { sqliteTransact } from './batch.js';
import { dialect } from './dialect.js';
import { sqliteKeys } from './keys/sqlite-table.js';

export * from './index.js';

export { aleKeys, keyTable as aleKeysTable } from './keys/sqlite-table.js';

/** SQL type 'text' for envelopes and for blind indexes; 'blob' for envelopes with storage: 'binary'. */
export const { encryptedText, encryptedJson, blindIndexColumn, migratePlaintext, rotateKeys, convertStorage, convertToTenantKeys, tenantKeys } = dialect<'sqlite'>(customType, { text: 'text', binary: 'blob', index: 'text' }, sqliteTransact, sqliteKeys);
