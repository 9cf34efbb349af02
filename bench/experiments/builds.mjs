// Two or more builds of the addon side by side, in one process: the 256 B
// tight loops (encrypt, decrypt, encryptBinary, decryptBinary) and the
// bench's micro tiers, each build's turn interleaved with the others' in
// rotating order, so drift hits every build alike. For "before and after"
// checks of a change that must not cost speed (docs/performance.md).
//
//   node --expose-gc bench/experiments/builds.mjs --addon /tmp/old/index.js --addon ./index.js [--rounds 5] [--paired 400]
//   bun bench/experiments/builds.mjs --addon … --addon …
//
// Last, every build and node:crypto in one interleaved set at 256 B, as the
// bench's micro tier times its pair (--paired rounds of 50 calls; 0 skips
// it, --rounds 0 skips the rest): each build's paired speed-up over
// node:crypto, and its time over the first build's. Give a copy of the
// first build, in a directory of its own, as the last --addon for an A/A
// control: what the set's order alone makes of one build (the same
// directory twice is one module, which ran slower in third place).
//
// Each --addon is a loader (index.js) next to its ale.<platform>.node. On
// Bun, `--addon path@napi` or `path@ffi` loads that build with
// ALE_BUN_PATH set so (docs/performance.md, "Bun: the bun:ffi path"); give
// each build its own directory, and not this checkout's, which the bench's
// modules have loaded already.
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { payload, runMicro, timeBatches } from '../micro.mjs';
import { NodeCryptoAle } from '../reference.mjs';
import { median, pairedOverhead } from '../stats.mjs';

const { values: flags } = parseArgs({
  options: {
    addon: { type: 'string', multiple: true },
    rounds: { type: 'string', default: '5' },
    loop: { type: 'string', default: '200000' },
    paired: { type: 'string', default: '400' },
  },
});
if (!flags.addon || flags.addon.length < 2) throw new Error('give two or more --addon paths');
const require = createRequire(import.meta.url);
const bunPath = process.env.ALE_BUN_PATH;
const builds = flags.addon.map((spec) => {
  const at = spec.lastIndexOf('@');
  const named = at > 0 && ['napi', 'ffi'].includes(spec.slice(at + 1));
  const [path, hot] = named ? [spec.slice(0, at), spec.slice(at + 1)] : [spec, bunPath];
  if (hot === undefined) delete process.env.ALE_BUN_PATH;
  else process.env.ALE_BUN_PATH = hot;
  const ale = require(resolve(path));
  return { path: `${path} (${ale.hotPath})`, ale };
});
const rounds = Number(flags.rounds);
const paired = Number(flags.paired);
// Paired rounds come in forward+backward twos.
if (!Number.isInteger(paired) || paired < 0 || paired % 2 !== 0) throw new Error('--paired takes an even number of rounds (0 skips it)');
const loop = Number(flags.loop);
const secret = 'bench-secret-0123456789-abcdefghijklmnop';
const CTX = ['tenant-bench', 'content_nodes', 'data'];
const text = payload(256);
const gc = globalThis.gc ?? globalThis.Bun?.gc ?? (() => {});

/** ns per call of each hot method of one build, one tight loop each; the results are checked. */
function tight(ale) {
  const ring = new ale.KeyRing([secret]);
  const env = ring.encrypt(text, ...CTX);
  const bin = ring.encryptBinary(text, ...CTX);
  if (ring.decrypt(env, ...CTX) !== text || ring.decryptBinary(bin, ...CTX) !== text) throw new Error('a build does not round-trip');
  const ops = {
    encrypt: () => ring.encrypt(text, CTX[0], CTX[1], CTX[2]).length,
    decrypt: () => ring.decrypt(env, CTX[0], CTX[1], CTX[2]).length,
    encryptBinary: () => ring.encryptBinary(text, CTX[0], CTX[1], CTX[2]).length,
    decryptBinary: () => ring.decryptBinary(bin, CTX[0], CTX[1], CTX[2]).length,
  };
  const out = {};
  for (const [name, f] of Object.entries(ops)) {
    for (let i = 0; i < 2000; i++) f();
    gc();
    let sink = 0;
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < loop; i++) sink += f();
    const ns = Number(process.hrtime.bigint() - t0) / loop;
    if (sink === 0) throw new Error('no output');
    out[name] = ns;
  }
  return out;
}

const loops = builds.map(() => []);
const micro = builds.map(() => []);
for (let r = 0; r < rounds; r++) {
  for (let j = 0; j < builds.length; j++) {
    const k = (r + j) % builds.length;
    loops[k].push(tight(builds[k].ale));
    micro[k].push(runMicro(builds[k].ale, { warmup: 500, iterations: 1000, rounds: 10, secret, onStep: () => {} }));
  }
}

const runtime = process.versions.bun ? `Bun ${process.versions.bun}` : `Node ${process.version}`;
const range = (xs, f = (x) => x.toFixed(0)) => `${f(median(xs))} [${f(Math.min(...xs))}–${f(Math.max(...xs))}]`;
if (rounds > 0) printRounds();
if (paired > 0) printPaired(paired);

function printRounds() {
  console.log(`${runtime}, ${rounds} rounds; median [min–max] over rounds\n`);
  console.log(`| build | ${Object.keys(loops[0][0]).map((n) => `${n} 256 B (ns)`).join(' | ')} |`);
  console.log(`| --- |${' --- |'.repeat(Object.keys(loops[0][0]).length)}`);
  builds.forEach((b, k) => console.log(`| ${b.path} | ${Object.keys(loops[k][0]).map((n) => range(loops[k].map((x) => x[n]))).join(' | ')} |`));
  console.log(`\n| build | tier | addon encrypt (µs) | addon decrypt (µs) | × node:crypto enc / dec |`);
  console.log('| --- | --- | --- | --- | --- |');
  const us = (x) => x.toFixed(3);
  const ratio = (x) => x.toFixed(1);
  builds.forEach((b, k) => {
    for (const tier of [...new Set(micro[k][0].map((row) => row.tier))]) {
      const pick = (contender) => micro[k].map((rows) => rows.find((row) => row.tier === tier && row.contender === contender));
      const addon = pick('addon');
      const ref = pick('node:crypto');
      const enc = addon.map((a, i) => ref[i].encryptUs / a.encryptUs);
      const dec = addon.map((a, i) => ref[i].decryptUs / a.decryptUs);
      console.log(`| ${b.path} | ${tier} | ${range(addon.map((a) => a.encryptUs), us)} | ${range(addon.map((a) => a.decryptUs), us)} | ${range(enc, ratio)} / ${range(dec, ratio)} |`);
    }
  });
}

/** Every build and node:crypto in one interleaved set, paired as the micro tier is. */
function printPaired(setRounds) {
  const [tenant, collection, field] = CTX;
  const sides = [...builds.map((b) => new b.ale.KeyRing([secret])), new NodeCryptoAle([secret])];
  const envelopes = sides.map((side) => Array.from({ length: 16 }, () => side.encrypt(text, tenant, collection, field)));
  sides.forEach((side, k) => {
    // Each side opens what the next one sealed, so every pair interoperates.
    if (side.decrypt(envelopes[(k + 1) % sides.length][0], tenant, collection, field) !== text) throw new Error('the builds and node:crypto do not interoperate');
  });
  let sink = 0;
  const sets = {
    encrypt: sides.map((side) => () => (sink += side.encrypt(text, tenant, collection, field).length)),
    decrypt: sides.map((side, k) => (i) => (sink += side.decrypt(envelopes[k][i & 15], tenant, collection, field).length)),
  };
  for (let i = 0; i < 20000; i++) for (const f of [...sets.encrypt, ...sets.decrypt]) f(i);
  const fmt = ({ point, low, high }) => `${(1 + point).toFixed(3)} [${(1 + low).toFixed(3)}, ${(1 + high).toFixed(3)}]`;
  console.log(`\n${runtime}, 256 B, every build and node:crypto in one set of ${setRounds} paired rounds of 50 calls; 95% intervals\n`);
  console.log('| build | op | ns a call | × node:crypto | time / first build |');
  console.log('| --- | --- | --- | --- | --- |');
  for (const [op, fns] of Object.entries(sets)) {
    const timed = timeBatches(fns, { iterations: setRounds * 50, rounds: setRounds });
    const reference = timed.at(-1).samples;
    builds.forEach((b, k) => {
      const speedUp = fmt(pairedOverhead(timed[k].samples, reference));
      const relative = k === 0 ? '1' : fmt(pairedOverhead(timed[0].samples, timed[k].samples));
      console.log(`| ${b.path} | ${op} | ${timed[k].nsPerOp.toFixed(0)} | ${speedUp} | ${relative} |`);
    });
  }
  if (sink === 0) throw new Error('no output');
}
