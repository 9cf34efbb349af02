// Child process of the tenant-key bench: the memory a store holds for N
// loaded tenants, measured in a process that has done nothing else, so
// that memory freed by earlier work cannot hide the growth. Prints one JSON
// line: resident memory, V8 heap and external memory, before and after
// (each after a full collection).
import { tenantKeys } from '@sveltycms/ale/drizzle/sqlite';
import { openSqlite, SQLITE_DRIVERS } from './sqlite.mjs';
import { collect } from './micro.mjs';

const [file, kek, count] = process.argv.slice(2);
const tenants = Number(count);
const s = await openSqlite(file, { driver: SQLITE_DRIVERS[0] });
const keys = tenantKeys(s.db, { kek, maxTenants: tenants });
// One load first, so the code paths and the driver's statements exist before the baseline.
await keys.load('m-0');
collect();
const before = process.memoryUsage();
for (let i = 1; i < tenants; i++) await keys.load(`m-${i}`);
collect();
const after = process.memoryUsage();
if (keys.loadedTenants !== tenants) throw new Error(`${keys.loadedTenants} tenants loaded, not ${tenants}`);
if (!keys.sealer.encrypt('x', `m-${tenants - 1}`, 'content_nodes', 'data').startsWith('v2:')) throw new Error('a loaded tenant does not seal');
const mib = (x) => x / 2 ** 20;
console.log(JSON.stringify({ tenants, rssMiB: mib(after.rss - before.rss), heapMiB: mib(after.heapUsed - before.heapUsed), externalMiB: mib(after.external - before.external) }));
s.close();
