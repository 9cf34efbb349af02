// What an encrypted column's INSERT costs, piece by piece: a controlled
// experiment on the bench's content_nodes table (FTS5 triggers, WAL,
// synchronous=NORMAL), through Drizzle, on whichever runtime runs it. Each
// side changes one thing in the `data` column's toDriver; the sides run
// interleaved in rotating order on fresh files, and each side's median
// INSERT is compared with the plain one. Not part of the gate: it explains it
// (docs/performance.md).
//
//   node bench/experiments/in-write.mjs [--bytes 256] [--rounds 8] [--addon path/to/index.js] [--json]
//
// --addon loads another build of the addon (for example one built from an
// older commit) for the encrypt sides, so two builds can be compared with
// the same command; sides that build lacks are left out. --json prints one
// line of medians in µs instead of the table, for a driver that compares
// processes started with other runtime flags (largepages.mjs).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { customType, text } from 'drizzle-orm/sqlite-core';
import { encryptedText } from '@sveltycms/ale/drizzle/sqlite';
import { openSqlite, SYNC_DRIVER } from '../sqlite.mjs';
import { contentNodes, ddl, ns, row, timerCostNs, TENANT } from '../db.mjs';
import { median, overhead } from '../stats.mjs';

const { values: flags } = parseArgs({
  options: {
    bytes: { type: 'string', default: '256' },
    rounds: { type: 'string', default: '8' },
    addon: { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});
const bytes = Number(flags.bytes);
const rounds = Number(flags.rounds);
const require = createRequire(import.meta.url);
const ale = require(flags.addon ? resolve(flags.addon) : '../../index.js');
const ring = new ale.KeyRing(['bench-secret-0123456789-abcdefghijklmnop']);
const seal = (v) => ring.encrypt(v, TENANT, 'content_nodes', 'data');
const plaintext = row('content_nodes', 'x', bytes).data;
const made = Array.from({ length: 64 }, () => seal(plaintext));
const hasBinary = typeof ring.encryptBinary === 'function';
const madeBinary = hasBinary ? Array.from({ length: 64 }, () => ring.encryptBinary(plaintext, TENANT, 'content_nodes', 'data')) : [];

const inWrite = [];
let next = 0;
const column = (toDriver, dataType = 'text') => customType({ dataType: () => dataType, toDriver, fromDriver: (v) => v })('data');
const sides = {
  plain: text('data'),
  'control: a pre-made envelope': column(() => made[next++ & 63]),
  'isKeyRingInitialized(), + control': column(() => (ale.isKeyRingInitialized(), made[next++ & 63])),
  'isEnvelope(value), + control': column((v) => (ale.isEnvelope(v), made[next++ & 63])),
  'ring.encrypt in toDriver': column(seal),
  'ring.encrypt in toDriver, timed': column((v) => {
    const t0 = process.hrtime.bigint();
    const envelope = seal(v);
    inWrite.push(ns(t0));
    return envelope;
  }),
  encryptedText: encryptedText('data', { collection: 'content_nodes', tenant: TENANT, keyRing: ring }),
  ...(hasBinary && {
    'binary control: pre-made bytes': column(() => madeBinary[next++ & 63], 'blob'),
    "encryptedText, storage: 'binary'": encryptedText('data', { collection: 'content_nodes', tenant: TENANT, keyRing: ring, storage: 'binary' }),
  }),
};
const names = Object.keys(sides);
const isBinary = (name) => /binary/.test(name);
const tables = Object.fromEntries(names.map((n) => [n, contentNodes(sides[n])]));
const writes = Object.fromEntries(names.map((n) => [n, []]));
const ITERATIONS = 300;
for (let r = 0; r < rounds; r++) {
  const dir = mkdtempSync(join(tmpdir(), 'ale-in-write-'));
  const dbs = {};
  try {
    for (const [k, n] of names.entries()) {
      dbs[n] = await openSqlite(join(dir, `${k}.db`), { driver: SYNC_DRIVER });
      for (const stmt of ddl('recommended', isBinary(n) ? 'BLOB' : 'TEXT')) dbs[n].exec(stmt);
    }
    for (let i = -30; i < ITERATIONS; i++) {
      const shift = (i + r) % names.length;
      for (const n of [...names.slice(shift), ...names.slice(0, shift)]) {
        const values = row('content_nodes', `${r}-${i}`, bytes);
        const before = inWrite.length;
        const t0 = process.hrtime.bigint();
        dbs[n].db.transaction((tx) => {
          tx.insert(tables[n]).values(values).run();
        });
        if (i >= 0) writes[n].push(ns(t0));
        else inWrite.length = before;
      }
    }
    // Every side stored the value it should (controls: a pre-made envelope).
    for (const n of names) {
      const stored = dbs[n].all('SELECT data FROM content_nodes LIMIT 1')[0].data;
      const read = n === 'plain' ? stored : isBinary(n) ? ring.decryptBinary(stored, TENANT, 'content_nodes', 'data') : ring.decrypt(stored, TENANT, 'content_nodes', 'data');
      if (read !== plaintext) throw new Error(`side "${n}" stored the wrong value`);
    }
  } finally {
    for (const n of names) dbs[n]?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
const timer = timerCostNs();
const loop = [];
for (let i = 0; i < 2000; i++) {
  const t0 = process.hrtime.bigint();
  seal(plaintext);
  loop.push(ns(t0));
}
const runtime = process.versions.bun ? `Bun ${process.versions.bun}` : `Node ${process.version}`;
const base = median(writes.plain);
if (flags.json) {
  const sidesUs = Object.fromEntries(names.map((n) => [n, median(writes[n]) / 1000]));
  const timedUs = (median(inWrite) - timer) / 1000;
  const loopUs = (median(loop) - timer) / 1000;
  console.log(JSON.stringify({ runtime, bytes, rounds, insertUs: sidesUs, encryptInWriteUs: timedUs, encryptInLoopUs: loopUs }));
  process.exit(0);
}
console.log(`${runtime}, ${bytes} B into content_nodes, ${rounds} × ${ITERATIONS} INSERTs per side${flags.addon ? `, addon ${flags.addon}` : ''}`);
console.log(`plain INSERT: ${(base / 1000).toFixed(1)} µs (median)`);
const us = (ratio) => `${ratio < 0 ? '−' : '+'}${Math.abs((ratio * base) / 1000).toFixed(2)}`;
console.log('  each side against plain: median Δ in µs [95% bootstrap interval], and in %');
for (const n of names.slice(1)) {
  const o = overhead(writes.plain, writes[n]);
  console.log(`  ${n.padEnd(36)} ${us(o.point)} µs [${us(o.low)}, ${us(o.high)}]  (${(o.point * 100).toFixed(1)}%)`);
}
console.log(`ring.encrypt timed inside the INSERT: ${((median(inWrite) - timer) / 1000).toFixed(2)} µs; in a tight loop: ${((median(loop) - timer) / 1000).toFixed(2)} µs`);
