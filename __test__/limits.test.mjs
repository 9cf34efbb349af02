// Bounds on what a stored value can make the addon do: a value longer than
// the ring's maximum envelope length is refused before it is copied, so a
// hostile database value cannot exhaust memory.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ale, SECRET, CTX, throwsCode } from './helpers.mjs';

describe('maxEnvelopeLength', () => {
  test('a stored value longer than the maximum is ALE_ENVELOPE_TOO_LARGE; one at the maximum opens', () => {
    const writer = new ale.KeyRing([SECRET]);
    const env = writer.encrypt('x'.repeat(3000), ...CTX);
    const exact = new ale.KeyRing([SECRET], { maxEnvelopeLength: env.length });
    assert.equal(exact.decrypt(env, ...CTX), 'x'.repeat(3000));
    const small = new ale.KeyRing([SECRET], { maxEnvelopeLength: env.length - 1 });
    const e = throwsCode(assert, () => small.decrypt(env, ...CTX), 'ALE_ENVELOPE_TOO_LARGE');
    assert.match(e.message, new RegExp(`${env.length - 1} characters`));
    throwsCode(assert, () => small.keyIndex(env, ...CTX), 'ALE_ENVELOPE_TOO_LARGE');
    throwsCode(assert, () => small.decryptMany([env], ...CTX), 'ALE_ENVELOPE_TOO_LARGE');
    // refused while reading the arguments, like a bad context: before a promise exists
    throwsCode(assert, () => small.decryptAsync(env, ...CTX), 'ALE_ENVELOPE_TOO_LARGE');
  });

  test('a value whose envelope would be longer than the maximum is not encrypted (ALE_ENVELOPE_TOO_LARGE, without the value); the longest that is opens', async () => {
    for (const options of [{}, { keyIds: ['AAAAAAAAAAAAAAAAAAAAAA'] }, { ivLength: 12 }]) {
      const ring = new ale.KeyRing([SECRET], { ...options, maxEnvelopeLength: 200 });
      const unlimited = new ale.KeyRing([SECRET], options);
      for (const unit of ['x', 'é']) {
        const outcome = (n) => {
          try {
            return ring.encrypt(unit.repeat(n), ...CTX);
          } catch (e) {
            return e;
          }
        };
        let n = 0;
        while (n < 400 && typeof outcome(n + 1) === 'string') n++;
        const what = `${JSON.stringify(options)}: ${n} × ${unit}`;
        const longest = outcome(n);
        // refused exactly where the envelope would pass the maximum
        assert.ok(longest.length <= 200, `${what}: an envelope of ${longest.length}`);
        assert.ok(unlimited.encrypt(unit.repeat(n + 1), ...CTX).length > 200, `${what}: one more would fit`);
        assert.equal(ring.decrypt(longest, ...CTX), unit.repeat(n), what);
        const refused = outcome(n + 1);
        assert.equal(refused.code, 'ALE_ENVELOPE_TOO_LARGE', what);
        assert.match(refused.message, /200 characters/);
        assert.ok(!refused.message.includes(unit.repeat(3)), refused.message);
        throwsCode(assert, () => ring.encryptMany([unit, unit.repeat(n + 1)], ...CTX), 'ALE_ENVELOPE_TOO_LARGE');
        await assert.rejects(ring.encryptAsync(unit.repeat(n + 1), ...CTX), { code: 'ALE_ENVELOPE_TOO_LARGE' });
        // a binary envelope has no maximum
        assert.equal(ring.decryptBinary(ring.encryptBinary(unit.repeat(n + 1), ...CTX), ...CTX), unit.repeat(n + 1));
      }
    }
  });

  test('a ring of tenants writes no value longer than it reads, whatever its tenant ring would', async () => {
    const ring = ale.KeyRing.forTenants({ maxEnvelopeLength: 200 });
    ring.setTenant('t', [Buffer.alloc(32, 1)], { keyIds: ['AQEBAQEBAQEBAQEBAQEBAQ'] });
    const long = 'x'.repeat(300);
    throwsCode(assert, () => ring.encrypt(long, 't', 'c', 'f'), 'ALE_ENVELOPE_TOO_LARGE');
    await assert.rejects(ring.encryptAsync(long, 't', 'c', 'f'), { code: 'ALE_ENVELOPE_TOO_LARGE' });
    assert.equal(ring.decrypt(ring.encrypt('short', 't', 'c', 'f'), 't', 'c', 'f'), 'short');
  });

  test('a long value that does not start like an envelope is malformed before it is copied', () => {
    const small = new ale.KeyRing([SECRET], { maxEnvelopeLength: 100 });
    throwsCode(assert, () => small.decrypt('not an envelope '.repeat(500), ...CTX), 'ALE_MALFORMED_ENVELOPE');
    throwsCode(assert, () => small.decrypt(`v3:${'A'.repeat(5000)}`, ...CTX), 'ALE_UNSUPPORTED_VERSION');
    throwsCode(assert, () => small.decrypt(`v2:${'A'.repeat(5000)}`, ...CTX), 'ALE_ENVELOPE_TOO_LARGE');
  });

  test('the option takes a positive integer only', () => {
    for (const bad of [0, -5, 1.5, NaN, '100', Infinity]) {
      throwsCode(assert, () => new ale.KeyRing([SECRET], { maxEnvelopeLength: bad }), 'ALE_INVALID_INPUT');
    }
  });

  test('a 200-million-character stored value is refused without copying it (RSS grows by far less than the copy)', () => {
    // In a child, so the big string's memory is measured alone. A UTF-16 copy
    // would add 400 MB; the refusal reads a few characters.
    const child = `
      const ale = require(${JSON.stringify(fileURLToPath(new URL('../main.cjs', import.meta.url)))});
      const ring = new ale.KeyRing([${JSON.stringify(SECRET)}]);
      // a flat string, as a database driver returns it (a concatenation
      // would be a rope, which an engine may flatten when asked its length)
      const bytes = Buffer.alloc(200e6, 'A');
      bytes.write('v1:', 0);
      const huge = bytes.toString('latin1');
      const before = process.memoryUsage().rss;
      let code;
      try { ring.decrypt(huge, 't', 'c', 'f'); } catch (e) { code = e.code; }
      const grew = process.memoryUsage().rss - before;
      console.log(JSON.stringify({ code, grewMiB: Math.round(grew / 2 ** 20), length: huge.length }));
    `;
    const out = spawnSync(process.execPath, ['-e', child], { encoding: 'utf8', maxBuffer: 1 << 20 });
    assert.equal(out.status, 0, out.stderr);
    const result = JSON.parse(out.stdout.trim());
    assert.equal(result.code, 'ALE_ENVELOPE_TOO_LARGE');
    assert.ok(result.grewMiB < 64, `RSS grew by ${result.grewMiB} MiB`);
  });
});
