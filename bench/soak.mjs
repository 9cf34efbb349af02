// Memory soak: millions of encrypt + decrypt calls, sampling RSS, which must
// plateau (no per-call leak in the addon or its scratch buffers).
//   npm run soak                       # 10,000,000 operations
//   npm run soak -- --ops 1000000      # shorter
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { payload } from './micro.mjs';

const ale = createRequire(import.meta.url)('../index.js');
const { values } = parseArgs({ options: { ops: { type: 'string', default: '10000000' }, samples: { type: 'string', default: '10' } } });
const ops = Number(values.ops);
const samples = Number(values.samples);
const ring = new ale.KeyRing(['soak-secret-0123456789-abcdefghijklmnop']);
const texts = [payload(256), payload(4096), payload(4096, 'ü€'), 'a\u0000b'];
const mib = () => process.memoryUsage().rss / 2 ** 20;
const rows = [];
const started = process.hrtime.bigint();
const used = texts.map(() => 0); // round trips per input: every input takes its turn
let done = 0; // operations: each round trip is an encrypt and a decrypt
for (let s = 1, turn = 0; s <= samples; s++) {
  const until = Math.round((ops / samples) * s);
  for (; done < until; done += 2, turn++) {
    const which = turn % texts.length;
    const text = texts[which];
    const env = ring.encrypt(text, 't', 'c', 'f');
    if (ring.decrypt(env, 't', 'c', 'f') !== text) throw new Error('round trip failed');
    used[which]++;
  }
  rows.push({ ops: done, rssMiB: mib() });
  console.log(`${done.toLocaleString('en-US').padStart(12)} ops  RSS ${mib().toFixed(1)} MiB`);
}
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
const settled = rows[Math.min(1, rows.length - 1)].rssMiB;
const last = rows.at(-1).rssMiB;
console.log(`${process.versions.bun ? `Bun ${process.versions.bun}` : `Node ${process.version}`}: ${done.toLocaleString('en-US')} operations in ${seconds.toFixed(1)} s; RSS ${settled.toFixed(1)} MiB after the first ${(rows[Math.min(1, rows.length - 1)].ops).toLocaleString('en-US')} ops, ${last.toFixed(1)} MiB at the end`);
console.log(`round trips per input: ${used.map((n) => n.toLocaleString('en-US')).join(', ')}`);
if (Math.max(...used) - Math.min(...used) > 1) {
  console.error('not every input took its turn');
  process.exit(1);
}
if (last - settled > 48) {
  console.error(`RSS grew by ${(last - settled).toFixed(1)} MiB after warm-up: not a plateau`);
  process.exit(1);
}
