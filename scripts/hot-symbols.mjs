// Writes link/hot-symbols.txt: the addon's functions that the hot calls run
// (bench/footprint-probe.mjs's operations, on Node and on Bun), most
// instructions first, by their linker names. build.rs hands the list to
// lld, which lays those functions out together (docs/performance.md, "The
// cold footprint"). Run it again after a change to the hot path or a
// dependency's version: names it lists that a build lacks are skipped, and
// a function it does not list is laid out as any other.
//
// It profiles the addon exactly as `npm run build:addon` builds it
// (stripped), and names its functions by the linker's map of that build
// (build.rs writes one when ALE_LINK_MAP is set): a Rust symbol's name
// carries a hash of how it was built, so a list taken from another build
// (not stripped, or without napi's --target) would name nothing here.
//
//   node scripts/hot-symbols.mjs          (needs valgrind: sh scripts/valgrind.sh)
//   node scripts/hot-symbols.mjs --check  (CI: fails when the build lacks
//                                          more than a tenth of the list)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { costByAddress, endingAt, readParts, underCallgrind } from '../bench/callgrind.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const step = (what) => console.error(`[hot-symbols] ${what}`);
const list = join(root, 'link', 'hot-symbols.txt');
const check = process.argv.includes('--check');
/** The share of the list a build may lack before --check fails: a dependency's new version renames some. */
const STALE = 0.1;

const dir = mkdtempSync(join(tmpdir(), 'ale-hot-symbols-'));
try {
  main(dir);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/** Builds in `dir`, then checks the list against that build (--check) or writes it anew. */
function main(dir) {
  const map = join(dir, 'link.map');
  step('building the addon as build:addon does, with the linker writing its map');
  const build = spawnSync(join(root, 'node_modules', '.bin', 'napi'), ['build', '--platform', '--release', '--output-dir', dir], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, ALE_LINK_MAP: map },
  });
  if (build.status !== 0) throw new Error(`the build failed (exit ${build.status})`);
  const addon = join(dir, 'ale.linux-x64-gnu.node');
  if (!existsSync(map)) {
    throw new Error('the build wrote no linker map: build.rs lays the code out (and writes the map) only where rustc links with lld on x86_64 Linux with no linker of its own (see build.rs)');
  }
  const names = symbolsByAddress(readFileSync(map, 'utf8'));
  const known = new Set(names.map(([, name]) => name));
  if (check) {
    checkList(known);
    return;
  }
  const instructions = new Map();
  for (const runtime of ['node', 'bun']) {
    step(`running the hot calls under callgrind on ${runtime}`);
    underCallgrind(runtime, { out: join(dir, `${runtime}.out`), options: ['--dump-instr=yes'], args: ['--samples', '3'], env: { NAPI_RS_NATIVE_LIBRARY_PATH: addon } });
    for (const part of endingAt(readParts(dir, `${runtime}.out`, { cacheSim: false }), 'getgid')) {
      for (const [at, ir] of costByAddress(part, addon)) {
        const name = nameAt(names, at);
        if (name !== undefined) instructions.set(name, (instructions.get(name) ?? 0) + ir);
      }
    }
  }
  const hot = [...instructions].sort((a, b) => b[1] - a[1]).map(([name]) => name);
  if (hot.length < 20) throw new Error(`only ${hot.length} of the addon's functions were named: did the build write its map?`);
  const all = [...hot, ...otherCpus(hot, known)];
  writeFileSync(list, `${all.join('\n')}\n`);
  step(`wrote link/hot-symbols.txt: ${hot.length} functions that ran, ${all.length - hot.length} of their versions for AVX-512 or VAES`);
}

/**
 * The versions of the listed kernels that run instead on a CPU with
 * AVX-512 or VAES, which valgrind does not emulate (so the profile never
 * runs them): simdutf's icelake kernels beside its haswell ones, AWS-LC's
 * AVX-512 GCM functions, and the aes crate's block encryption with VAES
 * (with AVX-512, and alone) beside the AES-NI one the search tokens ran.
 */
function otherCpus(hot, known) {
  const listed = new Set(hot);
  const extra = new Set();
  for (const name of hot) {
    const icelake = name.replace('7simdutf7haswell', '7simdutf7icelake');
    if (icelake !== name && known.has(icelake)) extra.add(icelake);
  }
  const awsLc = hot.map((name) => /^aws_lc_\d+_\d+_\d+_/.exec(name)?.[0]).find(Boolean);
  for (const name of known) {
    if (awsLc && name.startsWith(awsLc) && name.includes('gcm') && name.endsWith('avx512')) extra.add(name);
  }
  if (hot.some((name) => name.includes('3aes8backends7x86_aes'))) {
    for (const name of known) if (/3aes8backends11x86_vaes(512|256)12Aes\$LT\$_\$GT\$7encrypt/.test(name)) extra.add(name);
  }
  return [...extra].filter((name) => !listed.has(name));
}

/**
 * --check: the build must have (almost) every listed function. A Rust
 * function's name carries a hash of the build (rustc's version among its
 * inputs): names that differ only there mean another toolchain, a warning
 * (the layout then covers only the C half); names gone altogether mean the
 * list is stale, an error.
 */
function checkList(known) {
  const unhashed = (name) => name.replace(/17h[0-9a-f]{16}E/g, 'E');
  const knownUnhashed = new Set([...known].map(unhashed));
  const listed = readFileSync(list, 'utf8').split('\n').filter(Boolean);
  const missing = listed.filter((name) => !known.has(name));
  const gone = missing.filter((name) => !knownUnhashed.has(unhashed(name)));
  const rustc = spawnSync('rustc', ['--version'], { encoding: 'utf8' }).stdout.trim();
  step(`${listed.length - missing.length} of the ${listed.length} listed functions are in this build (${rustc})`);
  if (gone.length > STALE * listed.length) {
    console.error(`link/hot-symbols.txt is stale: this build has no function named as ${gone.length} of its entries (${gone.slice(0, 3).join(', ')}, ...). Run node scripts/hot-symbols.mjs and commit the list.`);
    process.exitCode = 1;
  } else if (missing.length > STALE * listed.length) {
    const alsoGone = gone.length > 0 ? `; ${gone.length} more are gone: ${gone.join(', ')}` : '';
    console.error(`[hot-symbols] warning: ${missing.length - gone.length} listed Rust functions differ from this build's only by their hash: the list was made with another rustc (docs/performance.md names it), and lays out only the C half here${alsoGone}. node scripts/hot-symbols.mjs remakes it.`);
  } else if (missing.length > 0) {
    // A few names gone is no failure, but they may be the hottest (the list
    // once lost seal_into and open_into this way): say which.
    console.error(`[hot-symbols] warning: this build lacks ${missing.length} listed functions, which it lays out as any other: ${missing.join(', ')}. node scripts/hot-symbols.mjs remakes the list.`);
  }
}

/**
 * The symbols of lld's map (`-Map`) in .text, by address: its lines are
 * "VMA LMA Size Align Out/In/Symbol", the symbol lines indented furthest.
 */
function symbolsByAddress(text) {
  const symbols = [];
  let inText = false;
  for (const line of text.split('\n')) {
    const m = /^\s*([0-9a-f]+)\s+[0-9a-f]+\s+[0-9a-f]+\s+\d+ (\s*)(\S.*)$/.exec(line);
    if (!m) continue;
    const [, vma, indent, what] = m;
    if (indent.length === 0) inText = what === '.text'; // an output section
    else if (inText && indent.length > 8 && !what.includes(':(')) symbols.push([parseInt(vma, 16), what]);
  }
  if (symbols.length === 0) throw new Error('the linker map has no .text symbols: is the linker lld?');
  return symbols.sort((a, b) => a[0] - b[0]);
}

/** The symbol whose code holds `address`: the last one at or below it. */
function nameAt(symbols, address) {
  let lo = 0;
  let hi = symbols.length - 1;
  if (!(address >= symbols[0][0])) return undefined;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (symbols[mid][0] <= address) lo = mid;
    else hi = mid - 1;
  }
  return symbols[lo][1];
}
