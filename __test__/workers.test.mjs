// The addon in several worker_threads at once: IVs stay unique across all of
// them, the process-wide ring is shared, and workers can be terminated
// mid-work without crashing the process or leaking memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { ale, SECRET } from './helpers.mjs';

const script = new URL('./fixtures/iv-worker.mjs', import.meta.url);
const WORKERS = 4;
const PER_WORKER = 250_000;

const run = (workerData) =>
  new Promise((resolve, reject) => {
    const w = new Worker(script, { workerData });
    w.once('message', resolve);
    w.once('error', reject);
  });

test(`${WORKERS} workers × ${PER_WORKER.toLocaleString('en-US')} encryptions: no IV repeats`, async () => {
  ale.initKeyRing([SECRET]);
  const batches = await Promise.all(Array.from({ length: WORKERS }, () => run({ count: PER_WORKER })));
  const main = Array.from({ length: 50_000 }, () => ale.encrypt('payload', 't', 'c', 'f').slice(3, 19));
  const seen = new Set(main);
  let total = main.length;
  for (const ivs of batches) {
    assert.equal(ivs.length, PER_WORKER);
    for (const iv of ivs) seen.add(iv);
    total += ivs.length;
  }
  assert.ok(total >= 1_000_000);
  assert.equal(seen.size, total, `${total - seen.size} duplicate IVs`);
  console.log(`${total.toLocaleString('en-US')} IVs from ${WORKERS} workers and the main thread: 0 duplicates`);
});

test('workers terminated mid-encryption: no crash, no growing memory', async () => {
  const rss = [];
  for (let round = 0; round < 30; round++) {
    const workers = Array.from({ length: 3 }, () => new Worker(script, { workerData: { forever: true } }));
    await Promise.all(workers.map((w) => new Promise((resolve) => w.once('message', resolve))));
    await new Promise((r) => setTimeout(r, 10));
    await Promise.all(workers.map((w) => w.terminate()));
    if (round === 5 || round === 29) {
      globalThis.gc?.();
      rss.push(process.memoryUsage().rss);
    }
  }
  const ring = new ale.KeyRing([SECRET]);
  assert.equal(ring.decrypt(ring.encrypt('still alive', 't', 'c', 'f'), 't', 'c', 'f'), 'still alive');
  const growthMiB = (rss[1] - rss[0]) / 2 ** 20;
  console.log(`RSS after 6 rounds ${(rss[0] / 2 ** 20).toFixed(0)} MiB, after 30 rounds ${(rss[1] / 2 ** 20).toFixed(0)} MiB`);
  assert.ok(growthMiB < 64, `RSS grew ${growthMiB.toFixed(0)} MiB over 24 rounds of 3 terminated workers`);
});
