// Writes link/hot-symbols.txt: the addon's functions that the hot calls run
// (bench/footprint-probe.mjs's operations, on Node and on Bun), most
// instructions first, by their linker names. build.rs hands the list to
// lld, which lays those functions out together (docs/performance.md, "The
// cold footprint"). Run it again after a change to the hot path or a
// dependency's version: names it lists that a build lacks are skipped, and
// a function it does not list is laid out as any other.
//
//   node scripts/hot-symbols.mjs        (needs valgrind: sh scripts/valgrind.sh)
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { endingAt, readParts, selfCost, underCallgrind } from '../bench/callgrind.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const targetDir = join(root, 'target', 'hot-symbols');
const step = (what) => console.error(`[hot-symbols] ${what}`);

step('building the addon with its symbols (release, not stripped)');
const build = spawnSync('cargo', ['build', '--release', '--quiet'], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, CARGO_PROFILE_RELEASE_STRIP: 'none', CARGO_TARGET_DIR: targetDir, ALE_HOT_ORDER: '0' },
});
if (build.status !== 0) process.exit(build.status ?? 1);

const dir = mkdtempSync(join(tmpdir(), 'ale-hot-symbols-'));
try {
  const addon = join(dir, 'ale.node');
  copyFileSync(join(targetDir, 'release', 'libsveltycms_ale.so'), addon);
  const instructions = new Map();
  for (const runtime of ['node', 'bun']) {
    step(`running the hot calls under callgrind on ${runtime}`);
    underCallgrind(runtime, { out: join(dir, `${runtime}.out`), options: ['--demangle=no'], args: ['--samples', '3'], env: { NAPI_RS_NATIVE_LIBRARY_PATH: addon } });
    const parts = readParts(dir, `${runtime}.out`, { cacheSim: false });
    for (const part of endingAt(parts, 'getgid')) {
      for (const [fn, ir] of selfCost(part, addon)) instructions.set(fn, (instructions.get(fn) ?? 0) + ir);
    }
  }
  const names = [...instructions].sort((a, b) => b[1] - a[1]).map(([fn]) => fn);
  if (names.length < 20) throw new Error(`only ${names.length} of the addon's functions ran: was it the addon built here?`);
  writeFileSync(join(root, 'link', 'hot-symbols.txt'), `${names.join('\n')}\n`);
  step(`wrote link/hot-symbols.txt: ${names.length} functions`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
