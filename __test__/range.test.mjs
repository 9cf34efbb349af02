// The range index's parts (docs/search.md, "Ranges and order"): codes that
// keep the values' order, the tree's paths, covers and splits against a
// brute-force reading of their definitions, and range tokens on both
// backends side by side.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { ale, SECRET, OLD_SECRET, seeded } from './helpers.mjs';
import { checkValue, codeOf, textOf, valueOf } from '../dist/esm/drizzle/range/encoding.js';
import { cover, pathNodes, split } from '../dist/esm/drizzle/range/tree.js';
import { SPOT_LEVELS, spotLevel, spotNodes, withSpots } from '../dist/esm/drizzle/range/spots.js';

const require = createRequire(import.meta.url);
const js = require('../dist/cjs/fallback/index.js');
let native = null;
try {
  native = require('../index.js');
} catch (e) {
  if (process.env.CI === 'true') throw e;
  console.error(`\n!!! SKIPPING the range differential test: the native addon does not load here (${e.message})\n`);
}

const rand = seeded('range.test');
const int = (n) => Math.floor(rand() * n);
const U64 = (1n << 64n) - 1n;
const u64 = () => (BigInt(int(2 ** 32)) << 32n) | BigInt(int(2 ** 32));
const nodesOf = (buffer) => Array.from({ length: buffer.length / 9 }, (_, i) => [buffer[i * 9] / 4, buffer.readBigUInt64BE(i * 9 + 1)]);
/** Whether node [depth, start] holds `code`. */
const holds = ([depth, start], code) => code >> BigInt(64 - 4 * depth) === start >> BigInt(64 - 4 * depth);
/** A range: wide, narrow, at the ends of the domain, or one code. */
const range = () => {
  const a = [0n, U64, u64(), u64() >> BigInt(int(64))][int(4)];
  const width = [0n, BigInt(int(1000)), u64() >> BigInt(int(64)), u64()][int(4)];
  const b = a + width > U64 ? U64 : a + width;
  return [a, b];
};
/** Codes to test a range with: its ends, the codes just past them, some inside and some anywhere. */
const probes = (lo, hi) => {
  const out = [lo, hi, lo - 1n, hi + 1n, ...Array.from({ length: 20 }, () => (hi > lo ? lo + (u64() % (hi - lo + 1n)) : lo)), ...Array.from({ length: 20 }, u64)];
  return out.filter((c) => c >= 0n && c <= U64);
};

describe('codes keep the order of the values', () => {
  const VALUES = {
    number: () => [0, -0, 1, -1, 0.5, -0.5, Number.MIN_VALUE, -Number.MIN_VALUE, Number.MAX_VALUE, -Number.MAX_VALUE, Number.MAX_SAFE_INTEGER, 2 ** 53, -(2 ** 53), 1e-300, ...Array.from({ length: 400 }, () => (rand() - 0.5) * 10 ** int(30)), ...Array.from({ length: 100 }, () => int(2001) - 1000)],
    bigint: () => [0n, -1n, 1n, -(2n ** 63n), 2n ** 63n - 1n, ...Array.from({ length: 500 }, () => BigInt.asIntN(64, u64()))],
    date: () => [new Date(-8.64e15), new Date(8.64e15), new Date(0), new Date(-1), new Date(1), ...Array.from({ length: 500 }, () => new Date(Math.round((rand() - 0.5) * 2e13)))],
  };
  const plain = (v) => (v instanceof Date ? v.getTime() : v);
  for (const [type, make] of Object.entries(VALUES)) {
    test(`${type}: sorting by code is sorting by value, equal values share a code, and the text round-trips`, () => {
      const values = make();
      for (let i = 0; i < values.length; i++) {
        const [a, b] = [values[i], values[int(values.length)]];
        const [ca, cb] = [codeOf(type, a), codeOf(type, b)];
        assert.ok(ca >= 0n && ca <= U64);
        const expected = plain(a) < plain(b) ? -1 : plain(a) > plain(b) ? 1 : 0;
        assert.equal(ca < cb ? -1 : ca > cb ? 1 : 0, expected, `${type} ${String(a)} vs ${String(b)}`);
        const back = valueOf(type, textOf(type, a), 'test');
        assert.equal(plain(back), plain(a) === 0 ? 0 : plain(a));
      }
    });
  }
  test('each code is its definition: IEEE 754 bits flipped for numbers, the sign bit flipped for bigints and for dates as milliseconds', () => {
    const SIGN = 1n << 63n;
    const bits = (n) => {
      const b = Buffer.alloc(8);
      b.writeDoubleBE(n === 0 ? 0 : n);
      return b.readBigUInt64BE();
    };
    const defined = {
      number: (n) => (bits(n) & SIGN ? bits(n) ^ U64 : bits(n) | SIGN),
      bigint: (n) => BigInt.asUintN(64, n) ^ SIGN,
      date: (d) => BigInt.asUintN(64, BigInt(d.getTime())) ^ SIGN,
    };
    for (const [type, make] of Object.entries(VALUES)) {
      for (const v of make()) assert.equal(codeOf(type, v), defined[type](v), `${type} ${String(v)}`);
    }
    // Fixed pairs besides the definition above, so that a change to both cannot move stored tokens unseen.
    const pairs = [
      ['number', -Number.MAX_VALUE, 0x0010_0000_0000_0000n],
      ['number', -1.5, 0x4007_ffff_ffff_ffffn],
      ['number', -0, 0x8000_0000_0000_0000n],
      ['number', Number.MIN_VALUE, 0x8000_0000_0000_0001n],
      ['number', 1e300, 0xfe37_e43c_8800_759cn],
      ['bigint', -1n, 0x7fff_ffff_ffff_ffffn],
      ['bigint', 1_234_567_890_123n, 0x8000_011f_71fb_04cbn],
      ['date', new Date(-8.64e15), 0x7fe1_4df7_3d24_0000n],
      ['date', new Date(-1), SIGN - 1n],
      ['date', new Date('1969-07-20T20:17:40Z'), 0x7fff_fffc_b2a1_82a0n],
      ['date', new Date(8.64e15), 0x801e_b208_c2dc_0000n],
    ];
    for (const [type, v, code] of pairs) assert.equal(codeOf(type, v), code, `${type} ${String(v)}`);
  });
  test('dates before 1970 come first, and -0 is 0', () => {
    assert.ok(codeOf('date', new Date('1969-12-31T23:59:59.999Z')) < codeOf('date', new Date(0)));
    assert.equal(codeOf('number', -0), codeOf('number', 0));
    assert.equal(codeOf('bigint', -(2n ** 63n)), 0n);
    assert.equal(codeOf('bigint', 2n ** 63n - 1n), U64);
  });
  test('values a column cannot hold are ALE_INVALID_INPUT, and so is text it never wrote', () => {
    for (const [type, v] of [['number', Number.NaN], ['number', -Infinity], ['number', 1n], ['bigint', 2n ** 63n], ['bigint', -(2n ** 63n) - 1n], ['bigint', 1], ['date', new Date(Number.NaN)], ['date', 0]]) {
      assert.throws(() => checkValue(type, v, 'test'), { code: 'ALE_INVALID_INPUT' }, `${type} ${String(v)}`);
    }
    for (const [type, text] of [['number', 'abc'], ['number', ''], ['number', 'Infinity'], ['bigint', '1.5'], ['bigint', '99999999999999999999'], ['date', 'not a date']]) {
      assert.throws(() => valueOf(type, text, 'test'), { code: 'ALE_INVALID_INPUT' }, `${type} ${text}`);
    }
  });
});

describe('the tree', () => {
  test("a value's path: 16 nodes from depth 1 to the code itself, each holding it", () => {
    for (let i = 0; i < 200; i++) {
      const code = u64();
      const nodes = nodesOf(pathNodes(code));
      assert.deepEqual(nodes.map(([d]) => d), Array.from({ length: 16 }, (_, k) => k + 1));
      for (const node of nodes) assert.ok(holds(node, code));
      assert.equal(nodes[15][1], code);
    }
  });

  test('an exact cover holds every code of the range and no other; a cut one (at most 16 nodes) with its exclusion, likewise', () => {
    let largest = 0;
    for (let i = 0; i < 400; i++) {
      const [lo, hi] = range();
      const whole = cover(lo, hi, 1024);
      assert.equal(whole.exclude.length, 0);
      const exact = nodesOf(whole.include);
      largest = Math.max(largest, exact.length);
      const cut = cover(lo, hi, 16);
      const [inc, exc] = [nodesOf(cut.include), nodesOf(cut.exclude)];
      assert.ok(inc.length <= 16, `${inc.length} nodes`);
      if (exact.length <= 16) assert.deepEqual(inc, exact);
      for (const code of probes(lo, hi)) {
        const inside = lo <= code && code <= hi;
        assert.equal(exact.some((n) => holds(n, code)), inside, `exact cover of [${lo}, ${hi}] at ${code}`);
        assert.equal(inc.some((n) => holds(n, code)) && !exc.some((n) => holds(n, code)), inside, `cut cover of [${lo}, ${hi}] at ${code}`);
      }
      // The nodes of an exact cover do not overlap.
      for (const [j, n] of exact.entries()) assert.ok(!exact.some((m, k) => k !== j && holds(m, n[1]) && m[0] <= n[0]), 'overlapping nodes');
    }
    assert.ok(largest <= 480, `an exact cover took ${largest} nodes`);
  });

  test("split: the pieces tile the range in order, each inside one node below the two ends' common ancestor", () => {
    for (let i = 0; i < 400; i++) {
      const [lo, hi] = range();
      const pieces = split(lo, hi);
      assert.equal(pieces[0][0], lo);
      assert.equal(pieces.at(-1)[1], hi);
      for (let k = 1; k < pieces.length; k++) assert.equal(pieces[k][0], pieces[k - 1][1] + 1n);
      if (lo === hi) assert.equal(pieces.length, 1);
      else {
        assert.ok(pieces.length >= 2 && pieces.length <= 16);
        for (const [a, b] of pieces) assert.ok(nodesOf(pathNodes(a)).some((n, d) => holds(n, b) && !holds(nodesOf(pathNodes(lo))[d], hi)));
      }
    }
  });

  test("a value's tokens and a cover's tokens meet exactly when the value is in the range (no false negative, and none past an exact cover)", () => {
    const ring = new ale.KeyRing([SECRET]);
    const ctx = ['acme', 'measures', 'amount'];
    for (let i = 0; i < 100; i++) {
      const [lo, hi] = range();
      const tokens = ring.rangeTokens(cover(lo, hi, 1024).include, ...ctx);
      const set = new Set(Array.from({ length: tokens.length / 8 }, (_, k) => tokens.toString('hex', k * 8, k * 8 + 8)));
      for (const code of probes(lo, hi).slice(0, 10)) {
        const mine = ring.rangeTokens(pathNodes(code), ...ctx);
        const meet = Array.from({ length: 16 }, (_, k) => mine.toString('hex', k * 8, k * 8 + 8)).some((t) => set.has(t));
        assert.equal(meet, lo <= code && code <= hi);
      }
    }
  });
});

describe('spots', () => {
  const ring = new ale.KeyRing([SECRET]);
  const ctx = ['acme', 'measures', 'amount'];
  const hexes = (tokens) => new Set(tokens.toString('hex').match(/.{16}/g) ?? []);
  const stored = (code) => {
    const path = pathNodes(code);
    const level = spotLevel(ring.rangeTokens(path, ...ctx));
    return { level, tokens: hexes(ring.rangeTokens(level === 0 ? path : withSpots(path, level), ...ctx)) };
  };

  test('a level-j spot is one value in 16^j, levels nest, and a value is a spot or not whatever its row', () => {
    const counts = new Array(SPOT_LEVELS + 1).fill(0);
    const n = 40000;
    for (let i = 0; i < n; i++) counts[spotLevel(ring.rangeTokens(pathNodes(u64()), ...ctx))]++;
    const atLeast = (j) => counts.slice(j).reduce((x, y) => x + y, 0);
    // Binomial: 2,500 expected at level 1 or more (sd 48), 156 at 2 or more (sd 12.5); six sd either way.
    assert.ok(Math.abs(atLeast(1) - n / 16) < 6 * 48, `level ≥ 1: ${atLeast(1)}`);
    assert.ok(Math.abs(atLeast(2) - n / 256) < 6 * 12.5, `level ≥ 2: ${atLeast(2)}`);
    const code = u64();
    assert.deepEqual(stored(code), stored(code));
  });

  test("a spot cover of level j, exact or cut with its exclusion, meets a value's tokens exactly when the value is in the range and a spot of level j or more; a spot stores 16 tokens more a level", () => {
    // Spots found by trying (one code in 16 at level 1, one in 4,096 at level 3), a few of each level up to 3.
    const spotted = [];
    for (const want of [1, 1, 1, 1, 2, 2, 2, 3, 3]) {
      for (;;) {
        const code = u64();
        const s = stored(code);
        if (s.level >= want) {
          spotted.push({ code, ...s });
          break;
        }
      }
    }
    for (const { level, tokens } of spotted) assert.equal(tokens.size, 16 * (level + 1), `level ${level}: its path and one more a level`);
    const meets = (set, tokens) => [...tokens].some((t) => set.has(t));
    for (const { code, level, tokens } of spotted) {
      // Ranges around the spot, ranges that stop just short of it, and random ones.
      const near = [[code, code], [code - BigInt(int(1000)), code + BigInt(int(1000))], [code > 0n ? code - 1n - BigInt(int(100)) : 1n, code > 0n ? code - 1n : 0n], range()];
      for (const [a, b] of near) {
        const [lo, hi] = [a < 0n ? 0n : a, b > U64 ? U64 : b];
        if (lo > hi) continue;
        for (const max of [1024, 16]) {
          const { include, exclude } = cover(lo, hi, max);
          for (let j = 1; j <= 3; j++) {
            const inside = meets(hexes(ring.rangeTokens(spotNodes(include, j), ...ctx)), tokens);
            const excluded = exclude.length > 0 && meets(hexes(ring.rangeTokens(spotNodes(exclude, j), ...ctx)), tokens);
            assert.equal(inside && !excluded, lo <= code && code <= hi && level >= j, `level ${level}, asked ${j}, cover of ${max}`);
          }
          // and the plain cover still finds it exactly when it is in the range
          const plain = meets(hexes(ring.rangeTokens(include, ...ctx)), tokens) && !(exclude.length > 0 && meets(hexes(ring.rangeTokens(exclude, ...ctx)), tokens));
          assert.equal(plain, lo <= code && code <= hi);
        }
      }
    }
  });
});

describe('range tokens on both backends', { skip: native === null }, () => {
  test('the same tokens from the addon and node:crypto, for every secret; other tenants, columns and secrets get others', () => {
    const secrets = [SECRET, OLD_SECRET];
    const [n, j] = [new native.KeyRing(secrets), new js.KeyRing(secrets)];
    for (let i = 0; i < 300; i++) {
      const plain = i % 2 ? pathNodes(u64()) : cover(u64() >> 8n, u64(), 1 + int(100)).include;
      // a third of them in a spot tree (range/spots.ts)
      const nodes = i % 3 === 0 ? spotNodes(plain, 1 + int(8)) : plain;
      const ctx = [['acme', 'globex'][int(2)], 'measures', ['amount', 'born'][int(2)]];
      for (const secret of [0, 1]) {
        const a = n.rangeTokens(nodes, ...ctx, { secret });
        assert.deepEqual(a, j.rangeTokens(nodes, ...ctx, { secret }));
        assert.equal(a.length, (nodes.length / 9) * 8);
        const sorted = Array.from({ length: a.length / 8 }, (_, k) => a.subarray(k * 8, k * 8 + 8));
        for (let k = 1; k < sorted.length; k++) assert.ok(Buffer.compare(sorted[k - 1], sorted[k]) < 0, 'sorted and distinct');
      }
    }
    const known = pathNodes(123456789n);
    const base = n.rangeTokens(known, 'acme', 'measures', 'amount').toString('hex');
    for (const other of [n.rangeTokens(known, 'globex', 'measures', 'amount'), n.rangeTokens(known, 'acme', 'measures', 'born'), n.rangeTokens(known, 'acme', 'measures', 'amount', { secret: 1 })]) {
      assert.ok(!other.toString('hex').match(/.{16}/g).some((t) => base.includes(t)), 'no token in common');
    }
    // The process-wide functions are the ring's.
    native.initKeyRing(secrets);
    js.initKeyRing(secrets);
    const path = pathNodes(42n);
    assert.deepEqual(native.rangeTokens(path, 'acme', 'm', 'f'), n.rangeTokens(path, 'acme', 'm', 'f'));
    assert.deepEqual(js.rangeTokens(path, 'acme', 'm', 'f', { secret: 1 }), n.rangeTokens(path, 'acme', 'm', 'f', { secret: 1 }));
  });

  test('malformed nodes and options are ALE_INVALID_INPUT on both', () => {
    const node = (bits, code) => Buffer.concat([Buffer.from([bits]), Buffer.from(code.toString(16).padStart(16, '0'), 'hex')]);
    for (const ring of [new native.KeyRing([SECRET]), new js.KeyRing([SECRET])]) {
      for (const [bad, options] of [[node(0, 0n), undefined], [node(6, 0n), undefined], [node(8, 1n), undefined], [Buffer.alloc(8), undefined], [node(0x80, 1n), undefined], [node(0x9e, 1n), undefined], [Buffer.alloc(9 * 1025).fill(4), undefined], ['nodes', undefined], [node(4, 0n), { secret: -1 }], [node(4, 0n), { secret: 5 }]]) {
        assert.throws(() => ring.rangeTokens(bad, 'acme', 'm', 'f', options), { code: 'ALE_INVALID_INPUT' });
      }
      assert.throws(() => ring.rangeTokens(node(4, 0n), 'ac:me', 'm', 'f'), { code: 'ALE_INVALID_CONTEXT' });
    }
    // Arguments wrong in more than one way: the same first refusal on both (the ring, the context, the nodes' type, their shape, the tenant).
    const codeFrom = (fn) => {
      try {
        fn();
        return 'none';
      } catch (e) {
        return e.code ?? e.name;
      }
    };
    const tenants = { native: native.KeyRing.forTenants(), js: js.KeyRing.forTenants() };
    const detached = new Uint8Array(new ArrayBuffer(9));
    structuredClone(detached.buffer, { transfer: [detached.buffer] });
    for (const [what, call] of [
      ['a string of nodes in an empty tenant', (b) => new b.KeyRing([SECRET]).rangeTokens('nodes', '', 'm', 'f')],
      ['a malformed node of a tenant not held', (b) => tenants[b === native ? 'native' : 'js'].rangeTokens(Buffer.alloc(9), 'nobody', 'm', 'f')],
      ['another this, an empty tenant', (b) => b.KeyRing.prototype.rangeTokens.call({}, node(4, 0n), '', 'm', 'f')],
      ['a detached array', (b) => new b.KeyRing([SECRET]).rangeTokens(detached, 'acme', 'm', 'f').length],
    ]) {
      assert.equal(codeFrom(() => call(js)), codeFrom(() => call(native)), what);
    }
  });
});
