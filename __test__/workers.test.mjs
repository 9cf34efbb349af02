// The addon in several worker_threads at once: IVs stay unique across all of
// them, the process-wide ring is shared, and workers can be terminated
// mid-work without crashing the process or leaking memory
// (fixtures/worker-churn.mjs, in a child process).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
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

test(`${WORKERS} workers × ${PER_WORKER.toLocaleString('en-US')} encryptions: no IV repeats`, { timeout: 120_000 }, async () => {
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

test('workers terminated mid-encryption: no crash, no growing memory', () => {
  // In a child of its own: only there can Node force a collection
  // (--expose-gc), and under `bun test` this process's RSS holds every other
  // test file's memory too.
  const churn = fileURLToPath(new URL('./fixtures/worker-churn.mjs', import.meta.url));
  // A worker that does not stop when terminated hangs the child: bounded.
  const child = spawnSync(process.execPath, process.versions.bun ? [churn] : ['--expose-gc', churn], { encoding: 'utf8', timeout: 180_000 });
  assert.equal(child.signal, null, `the churn did not finish in 180 s (a terminated worker kept running): ${child.stderr}`);
  assert.equal(child.status, 0, child.stderr);
  const { rss, collected, alive } = JSON.parse(child.stdout);
  assert.equal(collected, true, 'the forced collection did not collect');
  assert.equal(alive, true, 'text and binary round trips on the main thread after the churn');
  const growthMiB = rss[1] - rss[0];
  console.log(`RSS after 6 rounds ${rss[0].toFixed(0)} MiB, after 30 rounds ${rss[1].toFixed(0)} MiB (full GC forced before each)`);
  assert.ok(growthMiB < 64, `RSS grew ${growthMiB.toFixed(0)} MiB over 24 rounds of 3 terminated workers`);
});
