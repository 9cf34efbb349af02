// Keys per tenant (tenantKeys, `keys: store` columns) beside the static
// ring, on the same inputs: the micro tier at 256 B with an A/A control,
// what loading a tenant costs the first time and from the cache, the memory
// 10,000 loaded tenants hold, and the DB write rows at 256 B and 4 KB (text
// and binary storage) on the CMS's SQLite adapter.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eq } from 'drizzle-orm';
import { text } from 'drizzle-orm/sqlite-core';
import { encryptedText, tenantKeys, transitKek } from '@sveltycms/ale/drizzle/sqlite';
import { contentNodes, ddl, ns, row, rowId, statements, TENANT } from './db.mjs';
import { collect, payload, timeBatches, TIMED_SCALE } from './micro.mjs';
import { openSqlite, SQLITE_DRIVERS } from './sqlite.mjs';
import { median, nearestRank, overhead, pairedOverhead, seededRandom, shuffled } from './stats.mjs';

const KEK = 'bench-kek-0123456789-abcdefghijklmnopqrs';
const [C, F] = ['content_nodes', 'data'];
/** Calls of each micro contender before timing. */
const WARMUP_CALLS = 20_000;
/** The tenant the micro rows take turns with. */
const SECOND_TENANT = `${TENANT}-2`;

/** A key store on a fresh SQLite file through the CMS's adapter; a local KEK unless `options.kek` is given. */
async function freshStore(dir, name, options = {}) {
  const s = await openSqlite(join(dir, `${name}.db`), { driver: SQLITE_DRIVERS[0] });
  for (const stmt of ddl('recommended')) s.exec(stmt);
  const keys = tenantKeys(s.db, { kek: KEK, ...options });
  await keys.ready();
  return { s, keys };
}

/**
 * Static ring against the tenant's ring at 256 B, encrypt and decrypt, with
 * a second static contender as the A/A control; and the same two with each
 * value for another tenant than the one before (TENANT and SECOND_TENANT in
 * turn), where the sealer's memo of its last tenant never holds.
 */
function micro(ale, keys, { iterations, rounds, secret }) {
  const ring = new ale.KeyRing([secret]);
  const twin = new ale.KeyRing([secret]);
  const sealer = keys.sealer;
  const text256 = payload(256);
  const two = [TENANT, SECOND_TENANT];
  const sealed = (r) => two.map((t) => r.encrypt(text256, t, C, F));
  const envelopes = { static: sealed(ring), twin: sealed(twin), tenant: sealed(sealer) };
  if (!envelopes.tenant.every((e) => e.startsWith('v2:'))) throw new Error('the tenant ring did not write v2');
  for (const [name, pair] of Object.entries(envelopes)) {
    const reader = name === 'tenant' ? sealer : name === 'twin' ? twin : ring;
    pair.forEach((env, k) => {
      if (reader.decrypt(env, two[k], C, F) !== text256) throw new Error(`${name} round trip failed`);
    });
  }
  let sink = 0;
  // Each two-tenant contender keeps its own turn: a shared one, flipped by
  // contenders called alternately in the warm-up, would hand each the same
  // tenant every time.
  const turns = [0, 0, 0, 0];
  const next = (k) => (turns[k] ^= 1);
  // The order within a round alternates forward and backward: the A/A twin
  // sits in the middle, where a cost of that place would show in the A/A,
  // and the static ring and the tenant keys swap the ends.
  const enc = [
    () => (sink += ring.encrypt(text256, TENANT, C, F).length),
    () => (sink += twin.encrypt(text256, TENANT, C, F).length),
    () => (sink += sealer.encrypt(text256, TENANT, C, F).length),
    () => (sink += ring.encrypt(text256, two[next(0)], C, F).length),
    () => (sink += sealer.encrypt(text256, two[next(1)], C, F).length),
  ];
  const dec = [
    () => (sink += ring.decrypt(envelopes.static[0], TENANT, C, F).length),
    () => (sink += twin.decrypt(envelopes.twin[0], TENANT, C, F).length),
    () => (sink += sealer.decrypt(envelopes.tenant[0], TENANT, C, F).length),
    () => {
      const k = next(2);
      sink += ring.decrypt(envelopes.static[k], two[k], C, F).length;
    },
    () => {
      const k = next(3);
      sink += sealer.decrypt(envelopes.tenant[k], two[k], C, F).length;
    },
  ];
  // One tenant first, then two in turn, each set after its own warm-up: a
  // long one, so that every contender runs the engine's optimized code when
  // timed (the tenant path has more JS to compile), then many short rounds,
  // each pairing the contenders moments apart (stats.mjs, pairedOverhead).
  // Timed together, the two-tenant contenders' feedback would reach the
  // one-tenant rows through the shared sealer.
  const timed = (fns) => {
    for (let i = 0; i < WARMUP_CALLS; i++) for (const f of fns) f();
    return timeBatches(fns, { iterations: iterations * TIMED_SCALE, rounds: rounds * TIMED_SCALE });
  };
  const [e, d] = [enc.slice(0, 3), dec.slice(0, 3)].map(timed);
  const [e2, d2] = [enc.slice(3), dec.slice(3)].map(timed);
  e.push(...e2);
  d.push(...d2);
  if (sink === 0) throw new Error('benchmark produced no output');
  const side = (t) => t.map((x) => x.nsPerOp / 1000);
  const names = ['static', 'static (A/A)', 'tenant', 'static, two tenants', 'tenant, two tenants'];
  return {
    tier: '256 B',
    encryptUs: Object.fromEntries(names.map((n, k) => [n, side(e)[k]])),
    decryptUs: Object.fromEntries(names.map((n, k) => [n, side(d)[k]])),
    encryptOverhead: pairedOverhead(e[0].samples, e[2].samples),
    decryptOverhead: pairedOverhead(d[0].samples, d[2].samples),
    encryptAA: pairedOverhead(e[0].samples, e[1].samples),
    decryptAA: pairedOverhead(d[0].samples, d[1].samples),
    encryptTwoTenants: pairedOverhead(e[3].samples, e[4].samples),
    decryptTwoTenants: pairedOverhead(d[3].samples, d[4].samples),
  };
}

/** A tenant's first load (keys created, wrapped, stored, unwrapped) and a load from the cache. */
async function loading(keys, { firstLoads }) {
  const first = [];
  for (let i = 0; i < firstLoads; i++) {
    const t0 = process.hrtime.bigint();
    await keys.load(`first-${i}`);
    first.push(ns(t0) / 1000);
  }
  // From the cache, load() returns the settled promise it keeps: timed as a call, and as an `await`.
  const n = 100_000;
  let t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) keys.load(TENANT);
  const cachedCallNs = ns(t0) / n;
  t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await keys.load(TENANT);
  const cachedAwaitNs = ns(t0) / n;
  t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await undefined;
  const bareAwaitNs = ns(t0) / n;
  return { firstLoads, firstMedianUs: median(first), firstP99Us: nearestRank(first, 0.99), cachedCallNs, cachedAwaitNs, bareAwaitNs };
}

/**
 * Loading through a key service: the same loads with the KEK in OpenBao's
 * transit engine (scripts/services.sh starts one on loopback and exports
 * BAO_ADDR and BAO_TOKEN), or why they did not run.
 */
async function transitLoading(dir, { firstLoads }) {
  const { BAO_ADDR: address, BAO_TOKEN: token } = process.env;
  if (!address || !token) return { skipped: 'BAO_ADDR and BAO_TOKEN are not set (eval "$(scripts/services.sh start)")' };
  const kek = transitKek({ address, token, key: `ale-bench-${process.pid}-${Date.now()}` });
  const { s, keys } = await freshStore(dir, 'transit', { kek });
  try {
    await keys.load(TENANT);
    return { address, ...(await loading(keys, { firstLoads })) };
  } finally {
    s.close();
  }
}

/**
 * The memory `tenants` loaded tenants hold: their keys are created here,
 * then fresh processes of the same runtime load them all and keep them, or
 * drop each once loaded (tenant-memory.mjs); the difference of their
 * resident memory is what the loaded tenants hold.
 */
async function memory(dir, { tenants }) {
  const { s, keys } = await freshStore(dir, 'memory', { maxTenants: tenants });
  try {
    for (let i = 0; i < tenants; i++) await keys.load(`m-${i}`);
  } finally {
    s.close();
  }
  const run = (mode) => {
    const args = [...(process.versions.bun ? [] : ['--expose-gc']), fileURLToPath(new URL('./tenant-memory.mjs', import.meta.url)), join(dir, 'memory.db'), KEK, String(tenants), mode];
    const out = execFileSync(process.execPath, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    return JSON.parse(out.trim().split('\n').pop());
  };
  // Five of each, alternating; the medians are compared, since resident
  // memory moves between identical runs.
  const runs = { keep: [], forget: [] };
  for (let i = 0; i < 5; i++) for (const mode of ['keep', 'forget']) runs[mode].push(run(mode));
  const mib = (x) => x / 2 ** 20;
  const med = (mode, field) => median(runs[mode].map((r) => r[field]));
  return { tenants, heldMiB: mib(med('keep', 'held') - med('forget', 'held')), heapMiB: mib(med('keep', 'heapUsed') - med('forget', 'heapUsed')), keepRssMiB: mib(med('keep', 'rss')), forgetRssMiB: mib(med('forget', 'rss')) };
}

/** Interleaved single-row transactions into plain, static-ring and tenant-key tables; text and binary storage. */
async function dbRows(ale, dir, keys, { iterations, rounds, secret }) {
  const keyRing = new ale.KeyRing([secret]);
  const out = [];
  for (const bytes of [256, 4096]) {
    for (const storage of ['text', 'binary']) {
      const opts = { collection: C, tenant: TENANT, storage };
      const tables = {
        plain: contentNodes(text('data')),
        static: contentNodes(encryptedText('data', { ...opts, keyRing })),
        tenant: contentNodes(encryptedText('data', { ...opts, keys })),
      };
      const sides = Object.keys(tables);
      const writes = Object.fromEntries(sides.map((s) => [s, []]));
      for (let round = 0; round < rounds; round++) {
        const dbs = {};
        for (const side of sides) {
          dbs[side] = await openSqlite(join(dir, `${side}-${bytes}-${storage}-${round}.db`), { driver: SQLITE_DRIVERS[0] });
          for (const stmt of ddl('recommended', storage === 'binary' && side !== 'plain' ? 'BLOB' : 'TEXT')) dbs[side].exec(stmt);
        }
        const run = Object.fromEntries(sides.map((side) => [side, statements(dbs[side].db)]));
        try {
          // Each pass in its own order, so that no side always runs right after the same one and inherits its warm caches.
          const random = seededRandom(0x7e4a + round);
          for (let i = -20; i < iterations; i++) {
            for (const side of shuffled(sides, random)) {
              const values = row(C, rowId(i), bytes);
              const t0 = process.hrtime.bigint();
              await run[side].insert(tables[side], values);
              if (i >= 0) writes[side].push(ns(t0));
            }
          }
          const t = tables.tenant;
          const got = await run.tenant.get(dbs.tenant.db.select().from(t).where(eq(t._id, rowId(0))));
          if (got.data !== row(C, 'x', bytes).data) throw new Error('the tenant-key read returned the wrong value');
          const stored = dbs.tenant.all(`SELECT data AS v FROM content_nodes LIMIT 1`)[0].v;
          if (storage === 'text' ? !stored.startsWith('v2:') : stored[0] !== 2) throw new Error('the tenant-key table did not store v2');
        } finally {
          for (const side of sides) dbs[side].close();
        }
      }
      out.push({
        tier: bytes === 256 ? '256 B' : '4 KB',
        storage,
        plainWriteUs: median(writes.plain) / 1000,
        staticWriteUs: median(writes.static) / 1000,
        tenantWriteUs: median(writes.tenant) / 1000,
        staticOverhead: overhead(writes.plain, writes.static),
        tenantOverhead: overhead(writes.plain, writes.tenant),
        tenantOverStatic: overhead(writes.static, writes.tenant),
      });
    }
  }
  return out;
}

export async function runTenant(ale, { iterations, rounds, dbIterations, dbRounds, secret, quick, onStep }) {
  const dir = mkdtempSync(join(tmpdir(), 'ale-bench-tenant-'));
  try {
    const { s, keys } = await freshStore(dir, 'keys');
    try {
      await keys.load(TENANT);
      await keys.load(SECOND_TENANT);
      const load = await loading(keys, { firstLoads: quick ? 50 : 500 });
      onStep?.('tenant keys: loading');
      const m = micro(ale, keys, { iterations, rounds, secret });
      onStep?.('tenant keys: micro');
      const rows = await dbRows(ale, dir, keys, { iterations: dbIterations, rounds: Math.max(dbRounds, quick ? 1 : 6), secret });
      onStep?.('tenant keys: DB rows');
      const mem = await memory(dir, { tenants: 10_000 });
      onStep?.('tenant keys: memory');
      const transit = await transitLoading(dir, { firstLoads: quick ? 20 : 200 });
      onStep?.('tenant keys: loading through OpenBao');
      return { micro: m, load, transit, db: rows, memory: mem, driver: SQLITE_DRIVERS[0] };
    } finally {
      s.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
