// Encrypted column types, batch helpers and the tenant key store for drizzle-orm/mysql-core.
import { customType } from 'drizzle-orm/mysql-core';
import { asyncTransact } from './batch.js';
import { dialect } from './dialect.js';
import { mysqlJobs } from './jobs/mysql-table.js';
import { mysqlKeys } from './keys/mysql-table.js';

export * from './index.js';

export { aleKeys, keyTable as aleKeysTable } from './keys/mysql-table.js';

/** SQL type 'longtext' for envelopes ('longblob' with storage: 'binary'), 'char(43)' for blind indexes. */
export const { encryptedText, encryptedJson, blindIndexColumn, migratePlaintext, rotateKeys, convertStorage, convertToTenantKeys, tenantKeys } = dialect<'mysql'>(customType, { text: 'longtext', binary: 'longblob', index: 'char(43)' }, asyncTransact, mysqlKeys, mysqlJobs);
