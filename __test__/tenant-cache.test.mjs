// The tenant key store's cache of loaded tenants (ts/drizzle/keys/cache.ts):
// bounded, second-chance eviction, and a memo of the last tenant looked up
// that no change of the map can leave stale.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TenantCache } from '../dist/esm/drizzle/keys/cache.js';

const entry = (keyIds) => ({ loaded: true, keyIds, used: false, staleAt: Number.POSITIVE_INFINITY, seen: 0, sealed: 0 });

test('a tenant looked up, then deleted, replaced or evicted, is never answered from the memo', () => {
  const evicted = [];
  const cache = new TenantCache(2, (t) => evicted.push(t));
  const a = entry('a1');
  cache.set('a', a);
  assert.equal(cache.get('a'), a);
  cache.delete('a');
  assert.equal(cache.get('a'), undefined, 'deleted');

  cache.set('a', a);
  assert.equal(cache.get('a'), a);
  const a2 = entry('a2');
  cache.set('a', a2);
  assert.equal(cache.get('a'), a2, 'replaced');

  // 'a' is the oldest and unused: adding two more evicts it.
  cache.set('b', entry('b1'));
  assert.equal(cache.get('a'), a2);
  cache.set('c', entry('c1'));
  assert.deepEqual(evicted, ['a']);
  assert.equal(cache.get('a'), undefined, 'evicted');
  assert.equal(cache.size, 2);
});

test('second chance: a used tenant survives one pass of eviction, an unused one goes', () => {
  const evicted = [];
  const cache = new TenantCache(2, (t) => evicted.push(t));
  cache.set('a', entry('a1'));
  cache.set('b', entry('b1'));
  cache.get('a').used = true;
  cache.set('c', entry('c1'));
  assert.deepEqual(evicted, ['b']);
  assert.equal(cache.get('a').keyIds, 'a1');
  assert.equal(cache.get('a').used, false, 'its bit was cleared by the pass');
  assert.equal(cache.get('b'), undefined);
  assert.equal(cache.get('c').keyIds, 'c1');
});

test('the version moves on every change that can make an entry unusable, and only then', () => {
  const cache = new TenantCache(1, () => undefined);
  const moved = (f) => {
    const before = cache.version;
    f();
    return cache.version !== before;
  };
  const a = entry('a1');
  assert.ok(moved(() => cache.set('a', a)), 'set');
  assert.ok(!moved(() => cache.get('a')), 'get');
  assert.ok(!moved(() => cache.get('b')), 'a miss');
  assert.ok(moved(() => cache.expire(a, 0)), 'expire');
  assert.equal(a.staleAt, 0);
  assert.ok(moved(() => cache.set('b', entry('b1'))), 'set, evicting a');
  assert.equal(cache.get('a'), undefined);
  assert.ok(moved(() => cache.delete('b')), 'delete');
});
