// DB hot path: real SQLite (WAL, synchronous=NORMAL) through Drizzle, on
// tables shaped like the CMS's own. Each scenario writes and reads a plain
// and an encrypted database file side by side, alternating which goes first.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { sqliteTable, text, integer } from 'drizzle-orm/sqlite-core';
import { encryptedJson, encryptedText } from '@sveltycms/ale/drizzle/sqlite';
import { openSqlite } from './sqlite.mjs';
import { payload } from './micro.mjs';
import { median, overhead, verdict } from './stats.mjs';

const TENANT = 'tenant-bench';

export const SCENARIOS = [
  { table: 'content_nodes', tier: '256 B', bytes: 256, label: 'PII' },
  { table: 'content_nodes', tier: '4 KB', bytes: 4096, label: 'Standard' },
  { table: 'content_nodes', tier: '64 KB', bytes: 65536, label: 'Large' },
  { table: 'audit_logs', tier: '256 B', bytes: 256, label: 'Auth Event' },
  { table: 'audit_logs', tier: '4 KB', bytes: 4096, label: 'Audit Trail' },
];

/**
 * FTS5 set-ups. `recommended` keeps encrypted columns out of the index (the
 * README's advice), on both sides, so the comparison isolates encryption.
 * `naive` indexes `data` on both sides: with encryption on, FTS5 then
 * tokenises ciphertext, which is shown separately because it is a schema
 * mistake, not an encryption cost.
 */
const FTS_COLUMNS = { recommended: ['name', 'description'], naive: ['name', 'description', 'data'] };

function ddl(fts) {
  const cols = FTS_COLUMNS[fts].join(', ');
  const news = FTS_COLUMNS[fts].map((c) => `new.${c}`).join(', ');
  const olds = FTS_COLUMNS[fts].map((c) => `old.${c}`).join(', ');
  return [
  `CREATE TABLE content_nodes (
     _id TEXT PRIMARY KEY, path TEXT NOT NULL, parentId TEXT, nodeType TEXT NOT NULL,
     status TEXT NOT NULL, name TEXT NOT NULL, description TEXT, data TEXT, metadata TEXT,
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
     result TEXT NOT NULL, details TEXT, actorId TEXT, actorEmail TEXT, ipAddress TEXT,
     tenantId TEXT NOT NULL, timestamp INTEGER NOT NULL)`,
  ];
}

/** The same tables twice: plain columns, and this package's encrypted columns. */
function schemas(keyRing) {
  const content = (data) =>
    sqliteTable('content_nodes', {
      _id: text('_id').primaryKey(),
      path: text('path').notNull(),
      parentId: text('parentId'),
      nodeType: text('nodeType').notNull(),
      status: text('status').notNull(),
      name: text('name').notNull(),
      description: text('description'),
      data,
      metadata: text('metadata'),
      tenantId: text('tenantId').notNull(),
      createdAt: integer('createdAt').notNull(),
      updatedAt: integer('updatedAt').notNull(),
    });
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
    plain: { content_nodes: content(text('data')), audit_logs: audit(text('details', { mode: 'json' })) },
    encrypted: {
      content_nodes: content(encryptedText('data', opts('content_nodes'))),
      audit_logs: audit(encryptedJson('details', opts('audit_logs'))),
    },
  };
}

function row(table, id, bytes) {
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

async function openPair(dir, fts) {
  const open = async (name) => {
    const s = await openSqlite(join(dir, `${name}.db`));
    for (const stmt of ddl(fts)) s.exec(stmt);
    return s;
  };
  return { plain: await open('plain'), encrypted: await open('encrypted') };
}

const ns = (t0) => Number(process.hrtime.bigint() - t0);

/**
 * One scenario: `rounds` rounds, each on fresh database files, of
 * interleaved transactional inserts and then interleaved reads by id.
 */
async function runScenario(scenario, { iterations, rounds = 1, keyRing, gate, target, fts = 'recommended' }) {
  const tables = schemas(keyRing);
  const idCol = scenario.table === 'content_nodes' ? '_id' : 'id';
  const field = scenario.table === 'content_nodes' ? 'data' : 'details';
  const expected = JSON.stringify(row(scenario.table, '', scenario.bytes)[field]);
  const sides = ['plain', 'encrypted'];
  const writes = { plain: [], encrypted: [] };
  const reads = { plain: [], encrypted: [] };
  let stored;
  let fts0;
  for (let round = 0; round < rounds; round++) {
    const dir = mkdtempSync(join(tmpdir(), 'ale-bench-'));
    const dbs = await openPair(dir, fts);
    try {
      const warm = Math.min(20, iterations);
      for (let i = -warm; i < iterations; i++) {
        const order = (i + round) % 2 === 0 ? sides : [...sides].reverse();
        for (const side of order) {
          const t = tables[side][scenario.table];
          const values = row(scenario.table, `${side}-${i}`, scenario.bytes);
          const t0 = process.hrtime.bigint();
          dbs[side].db.transaction((tx) => {
            tx.insert(t).values(values).run();
          });
          if (i >= 0) writes[side].push(ns(t0));
        }
      }
      for (let i = 0; i < iterations; i++) {
        const order = (i + round) % 2 === 0 ? sides : [...sides].reverse();
        for (const side of order) {
          const t = tables[side][scenario.table];
          const t0 = process.hrtime.bigint();
          const got = dbs[side].db.select().from(t).where(eq(t[idCol], `${side}-${i}`)).get();
          reads[side].push(ns(t0));
          if (JSON.stringify(got[field]) !== expected) throw new Error(`${side} read returned the wrong ${field}`);
        }
      }
      stored ??= dbs.encrypted.all(`SELECT ${field} AS v FROM ${scenario.table} LIMIT 1`)[0].v;
      if (scenario.table === 'content_nodes') {
        const size = (s) => s.all('SELECT SUM(length(block)) AS n FROM content_nodes_fts_data')[0].n;
        fts0 ??= { plain: size(dbs.plain), encrypted: size(dbs.encrypted) };
      }
    } finally {
      dbs.plain.close();
      dbs.encrypted.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  // Isolated crypto cost per write: the column's encryption alone, same payload.
  const value = row(scenario.table, 'x', scenario.bytes)[field];
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  const cryptoNs = [];
  for (let i = 0; i < Math.max(200, iterations); i++) {
    const t0 = process.hrtime.bigint();
    keyRing.encrypt(text, TENANT, scenario.table, field);
    cryptoNs.push(ns(t0));
  }
  const w = overhead(writes.plain, writes.encrypted);
  const r = overhead(reads.plain, reads.encrypted);
  const plainWriteUs = median(writes.plain) / 1000;
  const cryptoUs = median(cryptoNs) / 1000;
  return {
    fts,
    table: scenario.table,
    tier: scenario.tier,
    label: scenario.label,
    bytes: scenario.bytes,
    iterations,
    rounds,
    plainWriteUs,
    encryptedWriteUs: median(writes.encrypted) / 1000,
    writeOverhead: w,
    plainReadUs: median(reads.plain) / 1000,
    encryptedReadUs: median(reads.encrypted) / 1000,
    readOverhead: r,
    cryptoUs,
    cryptoShare: cryptoUs / plainWriteUs,
    verdict: verdict(w, gate),
    meetsTarget: w.point < target,
    storedBytes: stored.length,
    ftsPlainBytes: fts0?.plain ?? null,
    ftsEncryptedBytes: fts0?.encrypted ?? null,
  };
}

/** Read latency when the row was written under a previous key (ring [new, old]). */
async function runRotationRead(ale, { iterations, secret, oldSecret }) {
  const dir = mkdtempSync(join(tmpdir(), 'ale-bench-rot-'));
  const current = new ale.KeyRing([secret, oldSecret]);
  const old = new ale.KeyRing([oldSecret]);
  const s = await openSqlite(join(dir, 'rotation.db'));
  try {
    for (const stmt of ddl('recommended')) s.exec(stmt);
    const t = schemas(current).encrypted.content_nodes;
    const tOld = schemas(old).encrypted.content_nodes;
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

export async function runDb(ale, options) {
  const keyRing = new ale.KeyRing([options.secret]);
  const results = [];
  const probe = await openSqlite(':memory:', { wal: false });
  const { sqliteVersion, driver } = probe;
  probe.close();
  for (const scenario of SCENARIOS) {
    results.push(await runScenario(scenario, { ...options, keyRing }));
    options.onStep?.(`db ${scenario.table} ${scenario.tier}`);
  }
  const naive = [];
  for (const scenario of SCENARIOS.filter((s) => s.table === 'content_nodes')) {
    naive.push(await runScenario(scenario, { ...options, keyRing, fts: 'naive' }));
    options.onStep?.(`db ${scenario.table} ${scenario.tier}, FTS over ciphertext`);
  }
  const rotation = await runRotationRead(ale, options);
  options.onStep?.('db rotation read');
  return { sqliteVersion, driver, scenarios: results, ftsOverCiphertext: naive, rotation };
}
