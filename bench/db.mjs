// DB hot path: real SQLite (WAL, synchronous=NORMAL) through Drizzle, on
// tables shaped like the CMS's own, through each SQLite driver of the
// runtime (the CMS's adapter first: node:sqlite behind sqlite-proxy on Node,
// bun:sqlite on Bun). Each scenario writes and reads a plain and an
// encrypted database file side by side, in a seeded random order.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { customType, sqliteTable, text, integer } from 'drizzle-orm/sqlite-core';
import { encryptedJson, encryptedText } from '@sveltycms/ale/drizzle/sqlite';
import { openSqlite, SQLITE_DRIVERS, SYNC_DRIVER } from './sqlite.mjs';
import { payload } from './micro.mjs';
import { median, overhead, seededRandom, shuffled, verdict } from './stats.mjs';

export const TENANT = 'tenant-bench';

export const SCENARIOS = [
  { table: 'content_nodes', tier: '256 B', bytes: 256, label: 'PII' },
  { table: 'content_nodes', tier: '4 KB', bytes: 4096, label: 'Standard' },
  { table: 'content_nodes', tier: '64 KB', bytes: 65536, label: 'Large' },
  { table: 'audit_logs', tier: '256 B', bytes: 256, label: 'Auth Event' },
  { table: 'audit_logs', tier: '4 KB', bytes: 4096, label: 'Audit Trail' },
];

/**
 * FTS5 set-ups. `recommended` keeps encrypted columns out of the index (the advice
 * of docs/drizzle.md, "Search: blind index and FTS"), on both sides, so the comparison isolates encryption.
 * `naive` indexes `data` on both sides: with encryption on, FTS5 then
 * tokenises ciphertext, which is shown separately because it is a schema
 * mistake, not an encryption cost.
 */
const FTS_COLUMNS = { recommended: ['name', 'description'], naive: ['name', 'description', 'data'] };

export function ddl(fts, valueType = 'TEXT') {
  const cols = FTS_COLUMNS[fts].join(', ');
  const news = FTS_COLUMNS[fts].map((c) => `new.${c}`).join(', ');
  const olds = FTS_COLUMNS[fts].map((c) => `old.${c}`).join(', ');
  return [
  `CREATE TABLE content_nodes (
     _id TEXT PRIMARY KEY, path TEXT NOT NULL, parentId TEXT, nodeType TEXT NOT NULL,
     status TEXT NOT NULL, name TEXT NOT NULL, description TEXT, data ${valueType}, metadata TEXT,
     tenantId TEXT NOT NULL, createdAt INTEGER NOT NULL, updatedAt INTEGER NOT NULL)`,
  `CREATE VIRTUAL TABLE content_nodes_fts USING fts5(${cols}, content='content_nodes', content_rowid='rowid')`,
  `CREATE TRIGGER content_nodes_ai AFTER INSERT ON content_nodes BEGIN
     INSERT INTO content_nodes_fts(rowid, ${cols}) VALUES (new.rowid, ${news});
   END`,
  `CREATE TRIGGER content_nodes_ad AFTER DELETE ON content_nodes BEGIN
     INSERT INTO content_nodes_fts(content_nodes_fts, rowid, ${cols}) VALUES ('delete', old.rowid, ${olds});
   END`,
  `CREATE TRIGGER content_nodes_au AFTER UPDATE ON content_nodes BEGIN
     INSERT INTO content_nodes_fts(content_nodes_fts, rowid, ${cols}) VALUES ('delete', old.rowid, ${olds});
     INSERT INTO content_nodes_fts(rowid, ${cols}) VALUES (new.rowid, ${news});
   END`,
  `CREATE TABLE audit_logs (
     id TEXT PRIMARY KEY, action TEXT NOT NULL, eventType TEXT NOT NULL, severity TEXT NOT NULL,
     result TEXT NOT NULL, details ${valueType}, actorId TEXT, actorEmail TEXT, ipAddress TEXT,
     tenantId TEXT NOT NULL, timestamp INTEGER NOT NULL)`,
  ];
}

/** The `content_nodes` table (see `ddl`) with `data` as the value column, and `extra` columns after it (bench/search.mjs's search index). */
export function contentNodes(data, extra = {}) {
  return sqliteTable('content_nodes', {
    _id: text('_id').primaryKey(),
    path: text('path').notNull(),
    parentId: text('parentId'),
    nodeType: text('nodeType').notNull(),
    status: text('status').notNull(),
    name: text('name').notNull(),
    description: text('description'),
    data,
    ...extra,
    metadata: text('metadata'),
    tenantId: text('tenantId').notNull(),
    createdAt: integer('createdAt').notNull(),
    updatedAt: integer('updatedAt').notNull(),
  });
}

/**
 * Row `i`'s id, the same on every side, so that no side writes longer rows
 * than another for its ids; each side writes a file of its own, so they
 * cannot collide.
 */
export const rowId = (i) => `row-${i}`;

/**
 * The same tables as plain columns, the storage controls (`control`,
 * `binaryControl`, see storageControl), and this package's encrypted columns
 * with text and with binary storage.
 */
function schemas(keyRing, control, binaryControl = control) {
  const audit = (details) =>
    sqliteTable('audit_logs', {
      id: text('id').primaryKey(),
      action: text('action').notNull(),
      eventType: text('eventType').notNull(),
      severity: text('severity').notNull(),
      result: text('result').notNull(),
      details,
      actorId: text('actorId'),
      actorEmail: text('actorEmail'),
      ipAddress: text('ipAddress'),
      tenantId: text('tenantId').notNull(),
      timestamp: integer('timestamp').notNull(),
    });
  const opts = (collection) => ({ collection, tenant: TENANT, keyRing });
  return {
    plain: { content_nodes: contentNodes(text('data')), audit_logs: audit(text('details', { mode: 'json' })) },
    control: { content_nodes: contentNodes(control), audit_logs: audit(control) },
    encrypted: {
      content_nodes: contentNodes(encryptedText('data', opts('content_nodes'))),
      audit_logs: audit(encryptedJson('details', opts('audit_logs'))),
    },
    binaryControl: { content_nodes: contentNodes(binaryControl), audit_logs: audit(binaryControl) },
    binary: {
      content_nodes: contentNodes(encryptedText('data', { ...opts('content_nodes'), storage: 'binary' })),
      audit_logs: audit(encryptedJson('details', { ...opts('audit_logs'), storage: 'binary' })),
    },
  };
}

export function row(table, id, bytes) {
  const now = Date.now();
  if (table === 'content_nodes') {
    return {
      _id: id,
      path: `/pages/${id}`,
      parentId: null,
      nodeType: 'page',
      status: 'published',
      name: `Page ${id}`,
      description: 'A page of the bench',
      data: payload(bytes),
      metadata: '{}',
      tenantId: TENANT,
      createdAt: now,
      updatedAt: now,
    };
  }
  // JSON details of about `bytes` bytes once serialised.
  const details = { ip: '203.0.113.7', userAgent: 'bench', note: payload(Math.max(0, bytes - 48)) };
  return {
    id,
    action: 'login',
    eventType: 'auth',
    severity: 'info',
    result: 'success',
    details,
    actorId: 'u1',
    actorEmail: 'admin@example.com',
    ipAddress: '203.0.113.7',
    tenantId: TENANT,
    timestamp: now,
  };
}

/** Sides whose value column holds bytes. */
const BINARY_SIDES = new Set(['binaryControl', 'binary']);

async function openSides(dir, fts, sides, driver) {
  const dbs = {};
  for (const side of sides) {
    dbs[side] = await openSqlite(join(dir, `${side}.db`), { driver });
    for (const stmt of ddl(fts, BINARY_SIDES.has(side) ? 'BLOB' : 'TEXT')) dbs[side].exec(stmt);
  }
  return dbs;
}

export const ns = (t0) => Number(process.hrtime.bigint() - t0);

/**
 * One row inserted in its own transaction, and one row read by id, as the
 * driver runs them: synchronously (better-sqlite3, bun:sqlite) or awaited
 * (node:sqlite behind sqlite-proxy, an `async` Drizzle database).
 */
export function statements(db) {
  // `before`, if given, runs in the transaction ahead of the INSERT, where a column's mappers would.
  if (db.resultKind === 'async') {
    return {
      insert: (t, values, before) =>
        db.transaction(async (tx) => {
          before?.();
          await tx.insert(t).values(values);
        }),
      get: (q) => q.get(),
    };
  }
  return {
    insert: (t, values, before) =>
      db.transaction((tx) => {
        before?.();
        tx.insert(t).values(values).run();
      }),
    get: (q) => q.get(),
  };
}

/**
 * A key ring that times its own encrypt calls, as the encrypted column makes
 * them inside each INSERT: the in-write crypto time. The timer's own cost,
 * measured the same way around an empty call, is subtracted.
 */
function timedRing(keyRing) {
  const samples = [];
  return {
    samples,
    ring: {
      encrypt(plaintext, t, c, f) {
        const t0 = process.hrtime.bigint();
        const envelope = keyRing.encrypt(plaintext, t, c, f);
        samples.push(ns(t0));
        return envelope;
      },
      decrypt: (stored, t, c, f) => keyRing.decrypt(stored, t, c, f),
    },
  };
}

export function timerCostNs() {
  const empty = [];
  const noop = () => undefined;
  for (let i = 0; i < 2000; i++) {
    const t0 = process.hrtime.bigint();
    noop();
    empty.push(ns(t0));
  }
  return median(empty);
}

/**
 * The storage control: a column that stores, with no crypto, envelopes made
 * before the run (64 distinct ones, in turn), as long as those the encrypted
 * column stores for this payload. Its overhead over plain is what the
 * envelope's extra bytes cost. A JSON value is serialised and dropped, as
 * the plain side's json column serialises it, so that the serialising is
 * not counted as the encrypt call's.
 */
function storageControl(name, envelopes, dataType = 'text') {
  let next = 0;
  const toDriver = (value) => {
    sink = serialised(value);
    return envelopes[next++ & 63];
  };
  return customType({ dataType: () => dataType, toDriver, fromDriver: (v) => v })(name);
}

/** The text a column encrypts for `value`: a string as it is, anything else as JSON. */
const serialised = (value) => (typeof value === 'string' ? value : JSON.stringify(value));

/**
 * The native-copy control: each value is a fresh envelope string that a
 * native call with no crypto makes (envelopeFromBytes of a pre-made binary
 * envelope). Over the storage control, it is what any cold native call that
 * makes such a string costs inside the write, crypto or not.
 */
function nativeCopyControl(name, ale, binaryEnvelopes) {
  let next = 0;
  const toDriver = (value) => {
    sink = serialised(value);
    return ale.envelopeFromBytes(binaryEnvelopes[next++ & 63]);
  };
  return customType({ dataType: () => 'text', toDriver, fromDriver: (v) => v })(name);
}

/**
 * The encrypt-then-bind control: the column's encrypt call runs on each
 * value, and a pre-made envelope is bound instead of its result. Over the
 * storage control, it is the encrypt call's cost inside the write; the
 * encrypted side's cost over it is binding the fresh string (and the
 * column's own JS).
 */
function encryptThenBindControl(name, keyRing, table, envelopes) {
  let next = 0;
  const toDriver = (value) => {
    sink = keyRing.encrypt(serialised(value), TENANT, table, name);
    return envelopes[next++ & 63];
  };
  return customType({ dataType: () => 'text', toDriver, fromDriver: (v) => v })(name);
}
/** Where the controls leave what they make and do not store, so that no engine can drop the work. */
let sink;

/** The bootstrap interval's half-width, in points of overhead. */
const halfWidth = ({ low, high }) => (high - low) / 2;

/**
 * The 256 B and 4 KB scenarios add rounds until the 95% interval of both
 * encrypted sides' write overhead is at most this wide on either side (the
 * issue asked for ±1.5 points at 256 B; a write there costs 40–80 µs, so a
 * round is cheap and the narrower interval decides more verdicts).
 */
const ADAPTIVE_HALF_WIDTH = 0.01;
const ADAPTIVE_MAX_BYTES = 4096;

/**
 * One scenario: rounds on fresh database files, each of interleaved
 * transactional inserts and then interleaved reads by id, each pass of
 * them in a seeded random order, for these sides: plain, plain again (the
 * A/A control), the storage control,
 * the native-copy and encrypt-then-bind controls, encrypted, and encrypted
 * with its encrypt calls timed; then a binary storage control and
 * encrypted with binary storage. The 256 B and 4 KB
 * tiers get more rounds until the 95% interval of the write overhead is at
 * most ±ADAPTIVE_HALF_WIDTH (or `maxRounds` is reached).
 */
async function runScenario(scenario, { ale, iterations, rounds = 1, maxRounds = rounds, keyRing, gate, target, fts = 'recommended', driver }) {
  const idCol = scenario.table === 'content_nodes' ? '_id' : 'id';
  const field = scenario.table === 'content_nodes' ? 'data' : 'details';
  const value = row(scenario.table, 'x', scenario.bytes)[field];
  const plaintext = typeof value === 'string' ? value : JSON.stringify(value);
  const expected = JSON.stringify(value);
  const timed = timedRing(keyRing);
  const envelopes = Array.from({ length: 64 }, () => keyRing.encrypt(plaintext, TENANT, scenario.table, field));
  const binaryEnvelopes = Array.from({ length: 64 }, () => keyRing.encryptBinary(plaintext, TENANT, scenario.table, field));
  // `timed` is the encrypted side with its encrypt calls timed; the timer
  // costs the write something, so the gate compares the untimed side.
  const tables = {
    ...schemas(keyRing, storageControl(field, envelopes), storageControl(field, binaryEnvelopes, 'blob')),
    timed: schemas(timed.ring, text(field)).encrypted,
    nativeCopy: schemas(keyRing, nativeCopyControl(field, ale, binaryEnvelopes)).control,
    encryptThenBind: schemas(keyRing, encryptThenBindControl(field, keyRing, scenario.table, envelopes)).control,
  };
  // plainAgain: plaintext once more, the A/A control (docs/performance.md): what two identical sides differ by in this run.
  tables.plainAgain = tables.plain;
  const sides = ['plain', 'plainAgain', 'control', 'nativeCopy', 'encryptThenBind', 'encrypted', 'timed', 'binaryControl', 'binary'];
  const writes = Object.fromEntries(sides.map((s) => [s, []]));
  const reads = { plain: [], encrypted: [], binary: [] };
  let stored;
  let fts0;
  let round = 0;
  const adaptive = scenario.bytes <= ADAPTIVE_MAX_BYTES && maxRounds > rounds;
  for (; round < maxRounds; round++) {
    const wide = () => ['encrypted', 'binary'].some((side) => halfWidth(overhead(writes.plain, writes[side])) > ADAPTIVE_HALF_WIDTH);
    if (round >= rounds && !(adaptive && wide())) break;
    const dir = mkdtempSync(join(tmpdir(), 'ale-bench-'));
    const dbs = await openSides(dir, fts, sides, driver);
    const run = Object.fromEntries(sides.map((side) => [side, statements(dbs[side].db)]));
    try {
      const warm = Math.min(20, iterations);
      // Each pass in its own order, so that no side always runs right after the same one and inherits its warm caches.
      const random = seededRandom(0x5eed + round);
      for (let i = -warm; i < iterations; i++) {
        for (const side of shuffled(sides, random)) {
          const t = tables[side][scenario.table];
          const values = row(scenario.table, rowId(i), scenario.bytes);
          const before = timed.samples.length;
          const t0 = process.hrtime.bigint();
          await run[side].insert(t, values);
          if (i >= 0) writes[side].push(ns(t0));
          else timed.samples.length = before; // warm-up calls are not counted
        }
      }
      const readSides = Object.keys(reads);
      for (let i = 0; i < iterations; i++) {
        for (const side of shuffled(readSides, random)) {
          const t = tables[side][scenario.table];
          const t0 = process.hrtime.bigint();
          const got = await run[side].get(dbs[side].db.select().from(t).where(eq(t[idCol], rowId(i))));
          reads[side].push(ns(t0));
          if (JSON.stringify(got[field]) !== expected) throw new Error(`${side} read returned the wrong ${field}`);
        }
      }
      const first = (side) => dbs[side].all(`SELECT ${field} AS v FROM ${scenario.table} LIMIT 1`)[0].v;
      stored ??= { text: first('encrypted'), binary: first('binary') };
      if (['control', 'nativeCopy', 'encryptThenBind'].some((side) => first(side).length !== stored.text.length) || first('binaryControl').length !== stored.binary.length) {
        throw new Error('a storage control stores a different length');
      }
      if (scenario.table === 'content_nodes') {
        const size = (db) => db.all('SELECT SUM(length(block)) AS n FROM content_nodes_fts_data')[0].n;
        fts0 ??= { plain: size(dbs.plain), encrypted: size(dbs.encrypted) };
      }
    } finally {
      for (const side of sides) dbs[side].close();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  // The same call in a tight loop, for comparison with the in-write time.
  const loopNs = [];
  for (let i = 0; i < Math.max(200, iterations); i++) {
    const t0 = process.hrtime.bigint();
    keyRing.encrypt(plaintext, TENANT, scenario.table, field);
    loopNs.push(ns(t0));
  }
  const timer = timerCostNs();
  const w = overhead(writes.plain, writes.encrypted);
  const aa = overhead(writes.plain, writes.plainAgain);
  const storage = overhead(writes.plain, writes.control);
  const nativeCopy = overhead(writes.plain, writes.nativeCopy);
  const encryptThenBind = overhead(writes.plain, writes.encryptThenBind);
  const r = overhead(reads.plain, reads.encrypted);
  const bw = overhead(writes.plain, writes.binary);
  const bStorage = overhead(writes.plain, writes.binaryControl);
  const plainWriteUs = median(writes.plain) / 1000;
  const inWriteCryptoUs = Math.max(0, median(timed.samples) - timer) / 1000;
  const cryptoUs = Math.max(0, median(loopNs) - timer) / 1000;
  return {
    fts,
    table: scenario.table,
    tier: scenario.tier,
    label: scenario.label,
    bytes: scenario.bytes,
    iterations,
    rounds: round,
    plainWriteUs,
    controlWriteUs: median(writes.control) / 1000,
    encryptedWriteUs: median(writes.encrypted) / 1000,
    writeOverhead: w,
    writeAA: aa,
    storageOverhead: storage,
    cryptoPart: w.point - storage.point,
    // The crypto part split by the two controls: the encrypt call inside
    // the write, then binding the fresh string it made; beside them, what a
    // native call with no crypto making such a string costs.
    encryptCallPart: encryptThenBind.point - storage.point,
    freshStringPart: w.point - encryptThenBind.point,
    nativeCopyPart: nativeCopy.point - storage.point,
    plainReadUs: median(reads.plain) / 1000,
    encryptedReadUs: median(reads.encrypted) / 1000,
    readOverhead: r,
    cryptoUs,
    inWriteCryptoUs,
    timerNs: timer,
    cryptoShare: inWriteCryptoUs / plainWriteUs,
    verdict: verdict(w, gate),
    meetsTarget: w.point < target,
    storedBytes: stored.text.length,
    binary: {
      encryptedWriteUs: median(writes.binary) / 1000,
      writeOverhead: bw,
      storageOverhead: bStorage,
      cryptoPart: bw.point - bStorage.point,
      readOverhead: overhead(reads.plain, reads.binary),
      storedBytes: stored.binary.length,
      verdict: verdict(bw, gate),
    },
    ftsPlainBytes: fts0?.plain ?? null,
    ftsEncryptedBytes: fts0?.encrypted ?? null,
  };
}

/** Read latency when the row was written under a previous key (ring [new, old]). */
async function runRotationRead(ale, { iterations, secret, oldSecret }) {
  const dir = mkdtempSync(join(tmpdir(), 'ale-bench-rot-'));
  const current = new ale.KeyRing([secret, oldSecret]);
  const old = new ale.KeyRing([oldSecret]);
  // The read time of a key fallback, not a driver comparison.
  const s = await openSqlite(join(dir, 'rotation.db'), { driver: SYNC_DRIVER });
  try {
    for (const stmt of ddl('recommended')) s.exec(stmt);
    const t = schemas(current, text('data')).encrypted.content_nodes;
    const tOld = schemas(old, text('data')).encrypted.content_nodes;
    for (let i = 0; i < iterations; i++) {
      s.db.insert(t).values(row('content_nodes', `new-${i}`, 4096)).run();
      s.db.insert(tOld).values(row('content_nodes', `old-${i}`, 4096)).run();
    }
    const times = { primary: [], previous: [] };
    for (let i = 0; i < iterations; i++) {
      for (const [kind, prefix] of i % 2 ? [['primary', 'new'], ['previous', 'old']] : [['previous', 'old'], ['primary', 'new']]) {
        const t0 = process.hrtime.bigint();
        const got = s.db.select().from(t).where(eq(t._id, `${prefix}-${i}`)).get();
        times[kind].push(ns(t0));
        if (got.data.length !== 4096) throw new Error('rotation read returned the wrong value');
      }
    }
    return { tier: '4 KB', primaryReadUs: median(times.primary) / 1000, previousKeyReadUs: median(times.previous) / 1000, overhead: overhead(times.primary, times.previous) };
  } finally {
    s.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Every scenario through every SQLite driver of the runtime. The first, the
 * CMS's adapter, is the headline (`scenarios`, `driver`); the others follow
 * in `otherAdapters`. FTS over ciphertext and the rotation read run on the
 * headline adapter only.
 */
export async function runDb(ale, options) {
  const keyRing = new ale.KeyRing([options.secret]);
  const adapters = [];
  for (const driver of SQLITE_DRIVERS) {
    const probe = await openSqlite(':memory:', { wal: false, driver });
    const adapter = { driver: probe.driver, sqliteVersion: probe.sqliteVersion, scenarios: [] };
    probe.close();
    for (const scenario of SCENARIOS) {
      adapter.scenarios.push(await runScenario(scenario, { ...options, ale, keyRing, driver }));
      options.onStep?.(`db ${scenario.table} ${scenario.tier} (${adapter.driver})`);
    }
    adapters.push(adapter);
  }
  const [headline, ...otherAdapters] = adapters;
  const naive = [];
  for (const scenario of SCENARIOS.filter((s) => s.table === 'content_nodes')) {
    naive.push(await runScenario(scenario, { ...options, ale, keyRing, fts: 'naive', driver: SQLITE_DRIVERS[0] }));
    options.onStep?.(`db ${scenario.table} ${scenario.tier}, FTS over ciphertext`);
  }
  const rotation = await runRotationRead(ale, options);
  options.onStep?.('db rotation read');
  return { ...headline, otherAdapters, ftsOverCiphertext: naive, rotation };
}
