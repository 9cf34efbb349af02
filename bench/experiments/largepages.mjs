// Does `node --use-largepages=on` help an encrypted write? Node remaps its
// own code onto 2 MiB pages with that flag, so a cold call walks fewer TLB
// entries (the issue "The write gate on every host" measured the penalty
// as page spread, not work). Each set starts in-write.mjs three times, in
// rotating order: without the flag, with it, and without it again (the A/A
// control: what two identical processes differ by). For each measure, the
// paired difference of each arm from the first, over sets: the median and
// a bootstrap 95% interval of that median, and how many sets went the
// arm's way. Advice goes into the README only if the "on" interval clears
// zero and the A/A one does not (docs/performance.md).
//
//   node bench/experiments/largepages.mjs [--sets 12] [--rounds 4] [--bytes 256]
//
// Bun has no such switch (JavaScriptCore maps its own JIT pages); this
// measures Node only.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { median, medianInterval } from '../stats.mjs';

const { values: flags } = parseArgs({
  options: {
    sets: { type: 'string', default: '12' },
    rounds: { type: 'string', default: '4' },
    bytes: { type: 'string', default: '256' },
  },
});
if (process.versions.bun) throw new Error('largepages.mjs measures a Node flag: run it with node');
const inWrite = fileURLToPath(new URL('./in-write.mjs', import.meta.url));
const arms = [
  { name: 'without the flag', flags: [] },
  { name: '--use-largepages=on', flags: ['--use-largepages=on'] },
  { name: 'without the flag again (A/A)', flags: [] },
];

// The flag is silently ignored where the kernel refuses huge pages
// (transparent_hugepage "never"): say so rather than report a null result
// as a measured one.
function nodeCodeOnHugePages(nodeFlags) {
  const script = "const s=require('fs').readFileSync('/proc/self/smaps','utf8');let kb=0;for(const b of s.split(/\\n(?=[0-9a-f]+-)/))if(/ r-xp /.test(b.split('\\n')[0])){const m=/AnonHugePages:\\s+(\\d+)/.exec(b);if(m)kb+=Number(m[1]);}console.log(kb)";
  return Number(execFileSync(process.execPath, [...nodeFlags, '-e', script], { encoding: 'utf8' }).trim());
}

const measures = {
  'plain INSERT': (r) => r.insertUs.plain,
  'encryptedText INSERT − plain': (r) => r.insertUs.encryptedText - r.insertUs.plain,
  'ring.encrypt timed in the INSERT': (r) => r.encryptInWriteUs,
};
const results = arms.map(() => []);
const sets = Number(flags.sets);
for (let s = 0; s < sets; s++) {
  for (let k = 0; k < arms.length; k++) {
    const a = (s + k) % arms.length;
    const out = execFileSync(process.execPath, [...arms[a].flags, inWrite, '--json', '--rounds', flags.rounds, '--bytes', flags.bytes], { encoding: 'utf8' });
    results[a][s] = JSON.parse(out.trim().split('\n').at(-1));
  }
  process.stderr.write(`set ${s + 1}/${sets}\n`);
}

const hugeKb = arms.map((a) => nodeCodeOnHugePages(a.flags));
const cpu = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown CPU';
console.log(`Node ${process.version}, ${cpu}, ${flags.bytes} B into content_nodes, ${sets} sets × ${flags.rounds} rounds of 300 INSERTs per side`);
console.log(`code on huge pages: ${arms.map((a, i) => `${a.name} ${hugeKb[i]} kB`).join(', ')}`);
const f = (x) => `${x < 0 ? '−' : '+'}${Math.abs(x).toFixed(2)}`;
for (const [measure, pick] of Object.entries(measures)) {
  const base = results[0].map(pick);
  console.log(`${measure}: ${median(base).toFixed(2)} µs without the flag (median of sets)`);
  for (let a = 1; a < arms.length; a++) {
    const diffs = results[a].map((r, s) => pick(r) - base[s]);
    const d = medianInterval(diffs);
    const lower = diffs.filter((x) => x < 0).length;
    console.log(`  ${arms[a].name.padEnd(30)} ${f(d.point)} µs [${f(d.low)}, ${f(d.high)}], lower in ${lower} of ${sets} sets`);
  }
}
