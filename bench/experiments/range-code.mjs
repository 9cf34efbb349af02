// What a value's code costs (docs/performance.md, "Ranges: a value's
// code"): `codeOf` against the function it replaced (a DataView and its
// buffer made per call, the bits flipped in BigInt arithmetic), on the
// range bench's values, outputs compared first. Each round times both, in
// turn, over every value `--passes` times; ns a value, median [min–max]
// over rounds.
//
//   node bench/experiments/range-code.mjs [--rounds 5] [--passes 1000]
//   bun bench/experiments/range-code.mjs
import { parseArgs } from 'node:util';
import { codeOf } from '../../dist/esm/drizzle/range/encoding.js';
import { RANGE_VALUES } from '../range-data.mjs';
import { median } from '../stats.mjs';

const { values: flags } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, passes: { type: 'string', default: '1000' } } });
const SIGN = 1n << 63n;
const U64 = (1n << 64n) - 1n;

/** codeOf as it was before 77a46fb. */
function before(type, value) {
  if (type === 'number') {
    const view = new DataView(new ArrayBuffer(8));
    view.setFloat64(0, value === 0 ? 0 : value);
    const bits = view.getBigUint64(0);
    return bits & SIGN ? ~bits & U64 : bits | SIGN;
  }
  const n = type === 'bigint' ? value : BigInt(value.getTime());
  return BigInt.asUintN(64, n) ^ SIGN;
}

const rows = RANGE_VALUES.measures(256);
const sets = { number: rows.map((r) => r.amount), bigint: rows.map((r) => r.total), date: rows.map((r) => r.born) };
/** ns a value of `code` over `values`, `--passes` times. */
const time = (code, type, values) => {
  let sink = 0n;
  const start = process.hrtime.bigint();
  for (let i = 0; i < Number(flags.passes); i++) for (const v of values) sink ^= code(type, v);
  const ns = Number(process.hrtime.bigint() - start) / Number(flags.passes) / values.length;
  if (sink === -1n) console.log('unreachable');
  return ns;
};
const runtime = process.versions.bun ? `Bun ${process.versions.bun}` : `Node ${process.version}`;
console.log(`${runtime}, ${flags.rounds} rounds of ${flags.passes} passes; ns a value, median [min–max]\n`);
console.log('| type | values | before | codeOf |');
console.log('| --- | --- | --- | --- |');
for (const [type, all] of Object.entries(sets)) {
  const values = all.filter((v) => v !== null);
  for (const v of values) if (before(type, v) !== codeOf(type, v)) throw new Error(`${type}: the two disagree`);
  time(before, type, values);
  time(codeOf, type, values);
  const got = { before: [], now: [] };
  for (let r = 0; r < Number(flags.rounds); r++) {
    got.before.push(time(before, type, values));
    got.now.push(time(codeOf, type, values));
  }
  const show = (xs) => `${median(xs).toFixed(0)} [${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}]`;
  console.log(`| ${type} | ${values.length} | ${show(got.before)} | ${show(got.now)} |`);
}
