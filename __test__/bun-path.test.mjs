// The hot path on Bun: bun:ffi into the addon's own library, or Node-API
// with ALE_BUN_PATH=napi; Node-API on Node. npm test runs every suite on
// Bun both ways. Here: which path runs, that both give the same results, and
// that ale_ffi, which any code could dlopen, names rings and contexts only
// by registry tokens, so a forged one reaches nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { ale, CTX, SECRET } from './helpers.mjs';

const onBun = Boolean(process.versions.bun);
const native = ale.backend === 'native';
// The addon finds its own file for bun:ffi with dladdr, which Windows has not (src/callbacks/install.rs).
const ffi = onBun && native && process.platform !== 'win32' && process.env.ALE_BUN_PATH !== 'napi';

test('the hot path is bun:ffi on Bun (not on Windows) unless ALE_BUN_PATH=napi, Node-API on Node, node:crypto on the js backend', () => {
  const expected = !native ? 'node:crypto' : ffi ? 'bun:ffi' : 'node-api';
  assert.equal(ale.hotPath, expected);
});

test('the same values and codes through either path: first and later calls of a context, every op, the process-wide ring', () => {
  const ring = new ale.KeyRing([SECRET]);
  ale.initKeyRing([SECRET]);
  // 3,072 units: the longest bun:ffi takes; 3,073: Node-API; 8,193: past the first scratch memory's bytes.
  // Decryption goes by the envelope's length: 2,267 and 2,268 ASCII characters make text envelopes of
  // 3,072 and 3,073 units (checked below), 3,038 and 3,039 make binary ones of 3,072 and 3,073 bytes.
  const values = ['', 'a', 'héllo ✓ 😀', 'y'.repeat(3072), 'y'.repeat(3073), '✓'.repeat(3072), 'y'.repeat(2267), 'y'.repeat(2268), 'y'.repeat(3038), 'y'.repeat(3039), 'y'.repeat(8193), 'x'.repeat(70_000), '\uFFFD real replacement character'];
  assert.deepEqual([2267, 2268].map((n) => ring.encrypt('y'.repeat(n), ...CTX).length), [3072, 3073]);
  assert.deepEqual([3038, 3039].map((n) => ring.encryptBinary('y'.repeat(n), ...CTX).length), [3072, 3073]);
  for (let round = 0; round < 3; round++) {
    for (const value of values) {
      const sealed = ring.encrypt(value, ...CTX);
      assert.equal(ring.decrypt(sealed, ...CTX), value);
      assert.equal(ale.decrypt(ale.encrypt(value, ...CTX), ...CTX), value);
      const bytes = ring.encryptBinary(value, ...CTX);
      assert.equal(ring.decryptBinary(bytes, ...CTX), value);
      assert.equal(ring.decryptBinary(new Uint8Array(bytes), ...CTX), value, 'a Uint8Array of its own');
      const offset = Buffer.concat([Buffer.from('pad'), bytes]).subarray(3);
      assert.equal(ring.decryptBinary(offset, ...CTX), value, 'a view at an offset');
    }
    assert.throws(() => ring.decrypt('v1:AAAAAAAAAAAAAAAAAAAAAA:AAAAAAAAAAAAAAAAAAAAAA:AAAA', ...CTX), { code: 'ALE_AUTH_FAILED' });
    assert.throws(() => ring.encrypt('lone \uD800', ...CTX), { code: 'ALE_INVALID_INPUT' });
    assert.throws(() => ring.decrypt('v1:ü', ...CTX), { code: 'ALE_MALFORMED_ENVELOPE' });
    assert.throws(() => ring.decryptBinary(new Uint16Array(4), ...CTX), { code: 'ALE_INVALID_INPUT' });
  }
});

test('ale_ffi reaches no ring or context through a forged token', { skip: !(onBun && native) && 'bun:ffi exists on Bun only' }, () => {
  // The symbol is there whichever path runs; any code could dlopen it.
  const { dlopen, FFIType: T } = createRequire(import.meta.url)('bun:ffi');
  const path = Object.keys(require.cache).find((p) => p.endsWith('.node')) ?? createRequire(import.meta.url).resolve('../ale.linux-x64-gnu.node');
  const { symbols } = dlopen(path, { ale_ffi: { args: [T.i32, T.f64, T.f64, T.ptr, T.i32, T.ptr, T.i32], returns: T.i32 } });
  const input = Buffer.from('plaintext');
  const output = Buffer.alloc(256);
  const NODE_API = -1;
  for (const token of [0, 1, 2 ** 32, 2 ** 32 + 1, 12345, 2 ** 52, -2, 0.5, NaN, Infinity]) {
    for (const op of [0, 1, 3]) assert.equal(symbols.ale_ffi(op, token, token, input, input.length, output, output.length), NODE_API, `op ${op}, token ${token}`);
  }
  assert.ok(output.every((b) => b === 0), 'nothing was written');
  // an encryption it does not seal (it takes the Node-API path) leaves no plaintext in the caller's memory
  const plaintext = Buffer.from('plaintext');
  assert.equal(symbols.ale_ffi(0, 12345, 12345, plaintext, plaintext.length, output, output.length), NODE_API);
  assert.ok(plaintext.every((b) => b === 0), 'the plaintext was wiped');
});

test('a keyed ring seals each value once, whatever its length, on either path', () => {
  // In a child, whose scratch memory has its first size: lengths around where
  // a v2 envelope outgrows the room bun:ffi gives it at first.
  const child = `
    const ale = require(${JSON.stringify(createRequire(import.meta.url).resolve('../main.cjs'))});
    const ring = new ale.KeyRing([${JSON.stringify(SECRET)}], { keyIds: ['AQEBAQEBAQEBAQEBAQEBAQ'] });
    let sealed = 0;
    for (let n = 3000; n <= 3040; n++) {
      if (ring.decrypt(ring.encrypt('x'.repeat(n), 't', 'c', 'f'), 't', 'c', 'f').length !== n) throw new Error('round trip');
      sealed++;
    }
    console.log(JSON.stringify({ sealed, counted: ring.stats()[0].encryptions }));
  `;
  const out = spawnSync(process.execPath, ['-e', child], { encoding: 'utf8' });
  assert.equal(out.status, 0, out.stderr);
  assert.deepEqual(JSON.parse(out.stdout), { sealed: 41, counted: 41 });
});

test('calls made at the edge of the stack, some refused for it, leave the scratch memory consistent: later values of every size round-trip', () => {
  const ring = new ale.KeyRing([SECRET]);
  // Each call at the deepest frame needs more scratch memory than the last, so that growing it is what runs out of stack.
  let size = 64;
  const refused = [];
  const atTheEdge = () => {
    try {
      atTheEdge();
    } catch {
      if (size <= 8192) {
        try {
          ring.decrypt(ring.encrypt('z'.repeat(size), ...CTX), ...CTX);
        } catch (e) {
          refused.push(e instanceof RangeError || e?.code === 'ALE_ENGINE_FAILURE' || e?.code === 'ALE_INTERNAL');
        }
        size *= 2;
      }
    }
  };
  for (let i = 0; i < 10; i++) atTheEdge();
  assert.ok(refused.every(Boolean), 'only the engine refused, for the stack');
  for (const n of [1, 100, 4095, 4096, 4097, 8191, 8192, 8193, 20_000]) {
    const value = 'q'.repeat(n - 1) + '✓';
    assert.equal(ring.decrypt(ring.encrypt(value, ...CTX), ...CTX), value, `${n} units`);
    assert.equal(ring.decryptBinary(ring.encryptBinary(value, ...CTX), ...CTX), value, `${n} units, binary`);
  }
});

test('scratch memory that fails to grow leaves size and buffer in step: the next call of that size writes within its buffer and round-trips', { skip: !ffi && 'the bun:ffi path only' }, () => {
  // In a process of its own, whose Buffer.allocUnsafeSlow (which the path
  // captures when it installs) fails once, at the output memory's growth. A
  // size recorded before its buffer existed (the third review's item 11)
  // would let the native side write an 8 KB envelope into the 4 KB buffer.
  const script = `
    const assert = require('node:assert/strict');
    const real = Buffer.allocUnsafeSlow;
    let calls = 0;
    let failAt = -1;
    Buffer.allocUnsafeSlow = function (n) {
      if (calls++ === failAt) throw new RangeError('induced allocation failure');
      return real.call(this, n);
    };
    const ale = require(${JSON.stringify(createRequire(import.meta.url).resolve('../main.cjs'))});
    assert.equal(ale.hotPath, 'bun:ffi');
    const ring = new ale.KeyRing([${JSON.stringify(SECRET)}]);
    const ctx = ${JSON.stringify(CTX)};
    assert.equal(ring.decrypt(ring.encrypt('warm', ...ctx), ...ctx), 'warm');
    // 2,000 three-byte characters: 6,000 bytes in, an envelope of about 8,000 out; both scratch buffers grow, the input's first.
    const value = '€'.repeat(2000);
    failAt = calls + 1;
    assert.throws(() => ring.encrypt(value, ...ctx), /induced allocation failure/);
    assert.equal(calls, failAt + 1, 'the output memory failed to grow');
    failAt = -1;
    for (let i = 0; i < 20; i++) {
      const sealed = ring.encrypt(value, ...ctx);
      assert.ok(sealed.length > 8000, 'an envelope larger than the first output memory');
      assert.equal(ring.decrypt(sealed, ...ctx), value);
    }
    console.log('ok');
  `;
  const child = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: { ...process.env, ALE_BACKEND: 'native' } });
  assert.equal(child.status, 0, child.stderr);
  assert.equal(child.stdout.trim(), 'ok');
});
