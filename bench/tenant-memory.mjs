// Child process of the tenant-key bench: loads N tenants into a fresh store
// and prints one JSON line with the process's resident memory and JS heap
// (after a full collection), and what it holds: resident memory less the
// heap's committed size (which the engine sizes by its own rules) plus the
// heap's live part. With `keep`, the tenants stay loaded; with
// `forget`, each is dropped right after it is loaded, so the process did the
// same work but holds none of them. The bench runs both in fresh processes:
// the difference is what N loaded tenants hold, without the memory the
// loading itself used and freed (which the allocator keeps).
import { getHeapStatistics } from 'node:v8';
import { tenantKeys } from '@sveltycms/ale/drizzle/sqlite';
import { openSqlite, SQLITE_DRIVERS } from './sqlite.mjs';
import { collect } from './micro.mjs';

const [file, kek, count, mode] = process.argv.slice(2);
const tenants = Number(count);
const s = await openSqlite(file, { driver: SQLITE_DRIVERS[0] });
const keys = tenantKeys(s.db, { kek, maxTenants: tenants });
for (let i = 0; i < tenants; i++) {
  await keys.load(`m-${i}`);
  if (!keys.sealer.encrypt('x', `m-${i}`, 'content_nodes', 'data').startsWith('v2:')) throw new Error('a loaded tenant does not seal');
  if (mode === 'forget') keys.forget(`m-${i}`);
}
collect();
const used = process.memoryUsage();
if (keys.loadedTenants !== (mode === 'forget' ? 0 : tenants)) throw new Error(`${keys.loadedTenants} tenants loaded`);
// What the process holds outside the JS heap's reserve: resident memory less the heap's committed size, plus its live part.
const heap = process.versions.bun ? { resident: used.heapTotal, live: used.heapUsed } : (({ total_physical_size: resident, used_heap_size: live }) => ({ resident, live }))(getHeapStatistics());
console.log(JSON.stringify({ tenants, mode, rss: used.rss, heapUsed: heap.live, held: used.rss - heap.resident + heap.live }));
s.close();
