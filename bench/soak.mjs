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
let done = 0;
for (let s = 1; s <= samples; s++) {
  const until = Math.round((ops / samples) * s);
  for (; done < until; done += 2) {
    const text = texts[done & 3];
    const env = ring.encrypt(text, 't', 'c', 'f');
    if (ring.decrypt(env, 't', 'c', 'f').length !== text.length) throw new Error('round trip failed');
  }
  rows.push({ ops: done, rssMiB: mib() });
  console.log(`${done.toLocaleString('en-US').padStart(12)} ops  RSS ${mib().toFixed(1)} MiB`);
}
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
const settled = rows[Math.min(1, rows.length - 1)].rssMiB;
const last = rows.at(-1).rssMiB;
console.log(`${process.versions.bun ? `Bun ${process.versions.bun}` : `Node ${process.version}`}: ${done.toLocaleString('en-US')} operations in ${seconds.toFixed(1)} s; RSS ${settled.toFixed(1)} MiB after the first ${(rows[Math.min(1, rows.length - 1)].ops).toLocaleString('en-US')} ops, ${last.toFixed(1)} MiB at the end`);
if (last - settled > 48) {
  console.error(`RSS grew by ${(last - settled).toFixed(1)} MiB after warm-up: not a plateau`);
  process.exit(1);
}
