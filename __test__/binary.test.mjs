// Binary envelopes: the same parts as the text form, as bytes, for columns
// that hold bytes. Round trips, binding, tampering, malformed bytes, the
// lossless conversion to and from text, and node:crypto reading the bytes.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createDecipheriv } from 'node:crypto';
import { ale, SECRET, OLD_SECRET, CTX, throwsCode } from './helpers.mjs';
import { resolveKeyMaterial } from './fixtures/sveltycms-reference.mjs';

const ring = new ale.KeyRing([SECRET]);
const ring12 = new ale.KeyRing([SECRET], { ivLength: 12 });

describe('binary envelopes', () => {
  test('round trip, 34 bytes over the plaintext (30 with a 12-byte IV), both readers', () => {
    for (const text of ['', 'alice@example.com', 'Grüße 世界 👋', 'x'.repeat(70_000)]) {
      const bytes = ring.encryptBinary(text, ...CTX);
      assert.ok(Buffer.isBuffer(bytes));
      assert.equal(bytes.length, Buffer.byteLength(text) + 34);
      assert.deepEqual([bytes[0], bytes[1]], [1, 16]);
      assert.equal(ring.decryptBinary(bytes, ...CTX), text);
      assert.equal(ring.decryptBinary(new Uint8Array(bytes), ...CTX), text, 'a plain Uint8Array');
      const short = ring12.encryptBinary(text, ...CTX);
      assert.equal(short.length, Buffer.byteLength(text) + 30);
      assert.equal(ring.decryptBinary(short, ...CTX), text);
    }
  });

  test('node:crypto reads the documented layout', () => {
    const bytes = ring.encryptBinary('layout', ...CTX);
    const ivLen = bytes[1];
    const iv = bytes.subarray(2, 2 + ivLen);
    const tag = bytes.subarray(2 + ivLen, 18 + ivLen);
    const decipher = createDecipheriv('aes-256-gcm', resolveKeyMaterial(SECRET).key, iv, { authTagLength: 16 });
    decipher.setAAD(Buffer.from(CTX.join(':')));
    decipher.setAuthTag(tag);
    assert.equal(Buffer.concat([decipher.update(bytes.subarray(18 + ivLen)), decipher.final()]).toString(), 'layout');
  });

  test('converts to and from the text form without a key, losslessly', () => {
    for (const writer of [ring, ring12]) {
      const text = writer.encrypt('both ways', ...CTX);
      const bytes = ale.envelopeToBytes(text);
      assert.equal(ale.envelopeFromBytes(bytes), text);
      assert.equal(ring.decryptBinary(bytes, ...CTX), 'both ways');
      const binary = writer.encryptBinary('other way', ...CTX);
      assert.equal(ring.decrypt(ale.envelopeFromBytes(binary), ...CTX), 'other way');
      assert.deepEqual(ale.envelopeToBytes(ale.envelopeFromBytes(binary)), binary);
    }
    throwsCode(assert, () => ale.envelopeToBytes('plain text'), 'ALE_MALFORMED_ENVELOPE');
    // text handed over as bytes ('p', 'v' are no version byte) is malformed, never read as a future version
    throwsCode(assert, () => ale.envelopeFromBytes(Buffer.from('plain text')), 'ALE_MALFORMED_ENVELOPE');
    throwsCode(assert, () => ale.envelopeFromBytes(Buffer.from(ring.encrypt('x', ...CTX))), 'ALE_MALFORMED_ENVELOPE');
  });

  test('bound to tenant, collection and field; any flipped bit fails', () => {
    const bytes = ring.encryptBinary('bound', ...CTX);
    for (const i of [0, 1, 2]) {
      const moved = [...CTX];
      moved[i] += '-other';
      throwsCode(assert, () => ring.decryptBinary(bytes, ...moved), 'ALE_AUTH_FAILED');
    }
    for (let bit = 16; bit < bytes.length * 8; bit += 3) {
      const flipped = Buffer.from(bytes);
      flipped[bit >> 3] ^= 1 << (bit & 7);
      throwsCode(assert, () => ring.decryptBinary(flipped, ...CTX), 'ALE_AUTH_FAILED');
    }
    assert.equal(ring.decryptBinary(bytes, ...CTX), 'bound', 'the input was not changed');
  });

  test('malformed bytes and wrong types are coded', () => {
    const good = ring.encryptBinary('x', ...CTX);
    const cases = {
      empty: [Buffer.alloc(0), 'ALE_MALFORMED_ENVELOPE'],
      'version only': [Buffer.from([1]), 'ALE_MALFORMED_ENVELOPE'],
      'IV length 13': [Buffer.concat([Buffer.from([1, 13]), good.subarray(2)]), 'ALE_MALFORMED_ENVELOPE'],
      'shorter than IV and tag': [good.subarray(0, 33), 'ALE_MALFORMED_ENVELOPE'],
      'version 0': [Buffer.concat([Buffer.from([0]), good.subarray(1)]), 'ALE_MALFORMED_ENVELOPE'],
      'version 3': [Buffer.concat([Buffer.from([3]), good.subarray(1)]), 'ALE_UNSUPPORTED_VERSION'],
      'version 0x1F': [Buffer.concat([Buffer.from([0x1f]), good.subarray(1)]), 'ALE_UNSUPPORTED_VERSION'],
      'first byte 0x20': [Buffer.concat([Buffer.from([0x20]), good.subarray(1)]), 'ALE_MALFORMED_ENVELOPE'],
    };
    for (const [name, [bytes, code]] of Object.entries(cases)) {
      assert.equal(throwsCode(assert, () => ring.decryptBinary(bytes, ...CTX), code).code, code, name);
    }
    for (const bad of ['v1:abc', 42, null, undefined, new Uint16Array(20), [1, 16]]) {
      throwsCode(assert, () => ring.decryptBinary(bad, ...CTX), 'ALE_INVALID_INPUT');
    }
    throwsCode(assert, () => ring.encryptBinary(42, ...CTX), 'ALE_INVALID_INPUT');
    throwsCode(assert, () => ring.encryptBinary('a\uD800', ...CTX), 'ALE_INVALID_INPUT');
  });

  test('small Buffers share pooled memory without overlapping; a detached pool is replaced', () => {
    // about 140 KB of envelopes: several pools of the addon (32 KiB each)
    const texts = Array.from({ length: 300 }, (_, i) => `${'v'.repeat((i * 29) % 900)}#${i}`);
    const made = texts.map((t) => ring.encryptBinary(t, ...CTX));
    made.forEach((b, i) => assert.equal(ring.decryptBinary(b, ...CTX), texts[i], `value ${i} intact after all were made`));
    assert.ok(new Set(made.map((b) => b.buffer)).size > 1, 'the values span more than one pool');
    // Move the current pool's memory away (detaching it), as user code can
    // through any pooled Buffer where the engine allows it (Node 24.9.0 and
    // Bun 1.4.5 do; later Node 24 releases refuse to detach an untransferable
    // ArrayBuffer, Node's own pool included). Later Buffers must not be
    // written there.
    const last = made.at(-1);
    const [offset, length] = [last.byteOffset, last.length];
    let moved;
    try {
      moved = last.buffer.transfer();
    } catch (e) {
      assert.ok(e instanceof TypeError, 'the engine refuses to detach the pool');
    }
    const snapshot = moved && Buffer.from(moved);
    const after = Array.from({ length: 50 }, (_, i) => ring.encryptBinary(`after ${i}`, ...CTX));
    after.forEach((b, i) => assert.equal(ring.decryptBinary(b, ...CTX), `after ${i}`));
    if (moved) {
      assert.ok(snapshot.equals(Buffer.from(moved)), 'no byte of the moved memory was written again');
      assert.equal(ring.decryptBinary(new Uint8Array(moved, offset, length), ...CTX), texts.at(-1));
    } else {
      assert.equal(ring.decryptBinary(last, ...CTX), texts.at(-1), 'the refused transfer left the envelope whole');
    }
  });

  test('postMessage and structuredClone refuse to transfer a pooled Buffer\'s memory', { skip: ale.backend !== 'native' && 'the fallback uses the engine\'s own Buffer pool' }, () => {
    const [a, b] = [ring.encryptBinary('a', ...CTX), ring.encryptBinary('b', ...CTX)];
    assert.equal(a.buffer, b.buffer, 'both cut from one pool');
    assert.throws(() => structuredClone(a.buffer, { transfer: [a.buffer] }));
    const { port1 } = new MessageChannel();
    try {
      assert.throws(() => port1.postMessage(a, [a.buffer]));
    } finally {
      port1.close();
    }
    assert.equal(ring.decryptBinary(b, ...CTX), 'b', 'the other envelope is intact');
  });

  test('rotation: a ring of [new, old] reads binary values of the old key', () => {
    const old = new ale.KeyRing([OLD_SECRET]).encryptBinary('old', ...CTX);
    const rotated = new ale.KeyRing([SECRET, OLD_SECRET]);
    assert.equal(rotated.decryptBinary(old, ...CTX), 'old');
    assert.equal(rotated.keyIndex(ale.envelopeFromBytes(old), ...CTX), 1);
  });
});

test('the process-wide ring has the binary calls too', () => {
  ale.initKeyRing([SECRET]);
  const bytes = ale.encryptBinary('global', ...CTX);
  assert.equal(ring.decryptBinary(bytes, ...CTX), 'global');
  assert.equal(ale.decryptBinary(ring.encryptBinary('back', ...CTX), ...CTX), 'back');
});
