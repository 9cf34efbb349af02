// The bench's statistics helpers: what the gate's verdicts and the query
// benches' percentiles rest on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatOverhead, nearestRank, seededRandom, shuffled } from '../bench/stats.mjs';

test('nearestRank is the value at rank ⌈q·n⌉: the 100th of 200 for the median, the 190th for p95, the first and last at the ends', () => {
  const samples = Array.from({ length: 200 }, (_, i) => 200 - i); // 200 … 1, sorted inside
  assert.equal(nearestRank(samples, 0.5), 100);
  assert.equal(nearestRank(samples, 0.95), 190);
  assert.equal(nearestRank(samples, 0.99), 198);
  assert.equal(nearestRank(samples, 0), 1);
  assert.equal(nearestRank(samples, 1), 200);
  assert.equal(nearestRank([7], 0.5), 7);
});

test('shuffled gives each order of the sides, from a seeded random source, and keeps every side once', () => {
  const sides = ['plain', 'control', 'encrypted', 'binary'];
  const random = seededRandom(42);
  const seen = new Set();
  const after = new Map();
  for (let i = 0; i < 2000; i++) {
    const order = shuffled(sides, random);
    assert.deepEqual([...order].sort(), [...sides].sort());
    seen.add(order.join());
    const before = order[order.indexOf('encrypted') - 1];
    after.set(before, (after.get(before) ?? 0) + 1);
  }
  assert.equal(seen.size, 24, 'all 4! orders');
  assert.equal(after.size, 4, 'the encrypted side runs first, or after each of the others');
  assert.deepEqual(shuffled(sides, seededRandom(7)), shuffled(sides, seededRandom(7)), 'the same seed, the same order');
});

test('formatOverhead: a point above 0 as its figure, below 0 "within noise" while the interval reaches 0 and "faster" when it does not', () => {
  assert.equal(formatOverhead({ point: 0.031, low: 0.02, high: 0.04 }), '+3.1% [+2.0%, +4.0%]');
  assert.equal(formatOverhead({ point: -0.01, low: -0.03, high: 0.01 }), 'within noise [-3.0%, +1.0%]');
  assert.equal(formatOverhead({ point: -0.1, low: -0.158, high: -0.057 }), 'faster [-15.8%, -5.7%]');
});
