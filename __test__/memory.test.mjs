// Memory: rings built, used once through the hot methods (which give each
// ring a native handle) and dropped are freed with their handles. In a child
// process of its own, so this file is left out of the arm64 run under
// qemu-user (scripts/test-arm64.sh), where no child can be exec'd.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

test('rings used once and dropped are freed: RSS stays flat over 80,000 of them', () => {
  // In a child: only there can Node force a collection (--expose-gc).
  const churn = fileURLToPath(new URL('./fixtures/ring-churn.mjs', import.meta.url));
  const child = spawnSync(process.execPath, process.versions.bun ? [churn] : ['--expose-gc', churn], { encoding: 'utf8' });
  assert.equal(child.status, 0, child.stderr);
  const { rss, rings } = JSON.parse(child.stdout);
  assert.equal(rings, 80_000);
  const growthMiB = rss[1] - rss[0];
  console.log(`RSS after 16,000 rings ${rss[0].toFixed(0)} MiB, after 80,000 ${rss[1].toFixed(0)} MiB (full GC forced before each)`);
  assert.ok(growthMiB < 24, `RSS grew ${growthMiB.toFixed(0)} MiB over 64,000 dropped rings (a ring's keys and handle take about 1 KiB)`);
});
