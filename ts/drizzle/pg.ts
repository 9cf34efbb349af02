// Encrypted column types, batch helpers and the tenant key store for drizzle-orm/pg-core.
import { customType } from 'drizzle-orm/pg-core';
import { asyncTransact } from './batch.js';
import { dialect } from './dialect.js';
import { pgJobs } from './jobs/pg-table.js';
import { pgKeys } from './keys/pg-table.js';

export * from './index.js';

export { aleKeys, keyTable as aleKeysTable } from './keys/pg-table.js';

/** SQL type 'text' for envelopes ('bytea' with storage: 'binary'), 'char(43)' for blind indexes. */
export const { encryptedText, encryptedJson, blindIndexColumn, migratePlaintext, rotateKeys, convertStorage, convertToTenantKeys, tenantKeys } = dialect<'pg'>(customType, { text: 'text', binary: 'bytea', index: 'char(43)' }, asyncTransact, pgKeys, pgJobs);
