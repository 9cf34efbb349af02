// The JS contract of the addon: API, errors, binding, rotation, text.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { inspect } from 'node:util';
import { ale, SECRET, OLD_SECRET, CTX, throwsCode, flipBit } from './helpers.mjs';

const ring = new ale.KeyRing([SECRET]);
const ring12 = new ale.KeyRing([SECRET], { ivLength: 12 });

describe('round trip', () => {
  const cases = {
    ascii: 'alice@example.com',
    empty: '',
    latin1: 'café déjà vu',
    cjk: '日本語のテキスト',
    emoji: '👩‍💻 ship it 🚀',
    nul: 'a\u0000b\u0000',
    'U+FFFD itself': 'replacement \uFFFD char',
    'astral + combining': '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 e\u0301',
  };
  for (const [name, text] of Object.entries(cases)) {
    test(name, () => {
      const env = ring.encrypt(text, ...CTX);
      assert.match(env, /^v1:[A-Za-z0-9_-]{22}:[A-Za-z0-9_-]{22}:[A-Za-z0-9_-]*$/);
      assert.equal(ring.decrypt(env, ...CTX), text);
      const short = ring12.encrypt(text, ...CTX);
      assert.match(short, /^v1:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]{22}:[A-Za-z0-9_-]*$/);
      // every ring reads both IV lengths, whatever it writes
      assert.equal(ring.decrypt(short, ...CTX), text);
      assert.equal(ring12.decrypt(env, ...CTX), text);
    });
  }

  test('empty plaintext is v1:<iv>:<tag>:', () => {
    assert.match(ring.encrypt('', ...CTX), /^v1:[A-Za-z0-9_-]{22}:[A-Za-z0-9_-]{22}:$/);
  });

  test('ivLength: 16 by default, 12 on request, nothing else', () => {
    assert.equal(ring.ivLength, 16);
    assert.equal(ring12.ivLength, 16 - 4);
    assert.equal(new ale.KeyRing([SECRET], { ivLength: 16 }).ivLength, 16);
    for (const ivLength of [0, 8, 13, 15, 17, 24, 32, '12', 12.5, null]) {
      throwsCode(assert, () => new ale.KeyRing([SECRET], { ivLength }), 'ALE_INVALID_INPUT');
    }
    throwsCode(assert, () => new ale.KeyRing([SECRET], 'fast'), 'ALE_INVALID_INPUT');
    throwsCode(assert, () => new ale.KeyRing([SECRET], { legacyFallbacks: 'no' }), 'ALE_INVALID_INPUT');
  });

  test('1 MiB value', () => {
    const big = 'x€'.repeat(1 << 19).slice(0, 1 << 20);
    const env = ring.encrypt(big, ...CTX);
    assert.equal(ring.decrypt(env, ...CTX), big);
  });

  test('every encryption uses a fresh IV', () => {
    const ivs = new Set();
    for (let i = 0; i < 5000; i++) ivs.add(ring.encrypt('same', ...CTX).split(':')[1]);
    assert.equal(ivs.size, 5000);
  });
});

describe('binding to tenant, collection and field', () => {
  const env = ring.encrypt('secret', ...CTX);
  for (const [i, name] of ['tenant', 'collection', 'field'].entries()) {
    test(`moved to another ${name} → ALE_AUTH_FAILED`, () => {
      const moved = [...CTX];
      moved[i] = `${moved[i]}-other`;
      throwsCode(assert, () => ring.decrypt(env, ...moved), 'ALE_AUTH_FAILED');
    });
  }

  test('no Unicode normalisation: NFC and NFD spellings are different values (SECURITY.md)', () => {
    const [nfc, nfd] = ['Jos\u00e9', 'Jose\u0301'];
    assert.equal(nfc.normalize('NFD'), nfd);
    assert.notEqual(ring.blindIndex(nfc, ...CTX), ring.blindIndex(nfd, ...CTX));
    assert.equal(ring.decrypt(ring.encrypt(nfd, ...CTX), ...CTX), nfd);
    const stored = ring.encrypt('x', nfc, 'users', 'email');
    throwsCode(assert, () => ring.decrypt(stored, nfd, 'users', 'email'), 'ALE_AUTH_FAILED');
  });

  test('colons and empty parts are rejected on both sides', () => {
    for (const bad of [['a:b', 'c', 'f'], ['t', 'c:d', 'f'], ['t', 'c', 'f:'], ['', 'c', 'f'], ['t', '', 'f'], ['t', 'c', '']]) {
      throwsCode(assert, () => ring.encrypt('x', ...bad), 'ALE_INVALID_CONTEXT');
      throwsCode(assert, () => ring.decrypt(env, ...bad), 'ALE_INVALID_CONTEXT');
    }
  });
});

for (const [ivBits, writer] of [[128, ring], [96, ring12]]) describe(`tampering, ${ivBits}-bit IV`, () => {
  const env = writer.encrypt('tamper me, please', ...CTX);
  const bits = { IV: [1, ivBits], tag: [2, 128], ciphertext: [3, 17 * 8] };
  for (const [name, [part, count]] of Object.entries(bits)) {
    test(`every single-bit flip in the ${name} → ALE_AUTH_FAILED (${count} flips)`, () => {
      for (let bit = 0; bit < count; bit++) {
        throwsCode(assert, () => ring.decrypt(flipBit(env, part, bit), ...CTX), 'ALE_AUTH_FAILED');
      }
    });
  }
  test('truncated and extended ciphertext → ALE_AUTH_FAILED', () => {
    const [v, iv, tag, ct] = env.split(':');
    const bytes = Buffer.from(ct, 'base64url');
    for (const changed of [bytes.subarray(0, -1), Buffer.concat([bytes, Buffer.from([0])]), Buffer.alloc(0)]) {
      throwsCode(assert, () => ring.decrypt([v, iv, tag, changed.toString('base64url')].join(':'), ...CTX), 'ALE_AUTH_FAILED');
    }
  });
});

describe('malformed envelopes', () => {
  const [, iv, tag, ct] = ring.encrypt('hello', ...CTX).split(':');
  const malformed = {
    'plain text': 'hello world',
    'empty string': '',
    'no version digits': `v:${iv}:${tag}:${ct}`,
    'three parts': `v1:${iv}:${tag}`,
    'five parts': `v1:${iv}:${tag}:${ct}:x`,
    'IV one short': `v1:${iv.slice(1)}:${tag}:${ct}`,
    'IV one long': `v1:${iv}A:${tag}:${ct}`,
    'tag one short': `v1:${iv}:${tag.slice(1)}:${ct}`,
    'tag one long': `v1:${iv}:${tag}A:${ct}`,
    'padding': `v1:${iv}:${tag}:${ct}=`,
    'standard alphabet': `v1:${iv}:${tag}:${ct.slice(0, -1)}+`,
    'non-ASCII': `v1:${iv}:${tag}:${ct}é`,
    'non-canonical trailing bits': `v1:${iv}:${tag}:aGl`,
    'impossible length': `v1:${iv}:${tag}:a`,
  };
  for (const [name, env] of Object.entries(malformed)) {
    test(`${name} → ALE_MALFORMED_ENVELOPE`, () => {
      throwsCode(assert, () => ring.decrypt(env, ...CTX), 'ALE_MALFORMED_ENVELOPE');
    });
  }
  test('other versions → ALE_UNSUPPORTED_VERSION; one of more than 19 digits is malformed', () => {
    for (const v of ['v0', 'v3', 'v10', 'v9999999999999999999']) {
      throwsCode(assert, () => ring.decrypt(`${v}:${iv}:${tag}:${ct}`, ...CTX), 'ALE_UNSUPPORTED_VERSION');
    }
    throwsCode(assert, () => ring.decrypt(`v99999999999999999999:${iv}:${tag}:${ct}`, ...CTX), 'ALE_MALFORMED_ENVELOPE');
  });
});

describe('keys and rotation', () => {
  test('a ring of [new, old] reads both and writes with new', () => {
    const old = new ale.KeyRing([OLD_SECRET]);
    const written = old.encrypt('rotate me', ...CTX);
    const rotated = new ale.KeyRing([SECRET, OLD_SECRET]);
    assert.equal(rotated.size, 2);
    assert.equal(rotated.decrypt(written, ...CTX), 'rotate me');
    const rewritten = rotated.encrypt('rotate me', ...CTX);
    assert.equal(new ale.KeyRing([SECRET]).decrypt(rewritten, ...CTX), 'rotate me');
    throwsCode(assert, () => old.decrypt(rewritten, ...CTX), 'ALE_AUTH_FAILED');
    throwsCode(assert, () => new ale.KeyRing([SECRET]).decrypt(written, ...CTX), 'ALE_AUTH_FAILED');
    assert.deepEqual(rotated.stats().filter((s) => !s.legacy).map((s) => s.encryptions), [1, 0]);
  });

  test('bad secrets → ALE_INVALID_KEY naming the position, never the value', () => {
    const short = 'too-short-secret';
    const e = throwsCode(assert, () => new ale.KeyRing([SECRET, short]), 'ALE_INVALID_KEY');
    assert.match(e.message, /secret #1/);
    assert.ok(!e.message.includes(short) && !e.stack.includes(short));
    throwsCode(assert, () => new ale.KeyRing([]), 'ALE_INVALID_KEY');
    throwsCode(assert, () => new ale.KeyRing([SECRET, 42]), 'ALE_INVALID_KEY');
    throwsCode(assert, () => new ale.KeyRing(SECRET), 'ALE_INVALID_KEY');
    throwsCode(assert, () => new ale.KeyRing(), 'ALE_INVALID_KEY');
  });

  test('fromEnv reads ENCRYPTION_KEY then ENCRYPTION_KEY_PREVIOUS', () => {
    const old = new ale.KeyRing([OLD_SECRET]).encrypt('x', ...CTX);
    const r = ale.KeyRing.fromEnv({ ENCRYPTION_KEY: SECRET, ENCRYPTION_KEY_PREVIOUS: `${'z'.repeat(40)},${OLD_SECRET}` });
    assert.equal(r.size, 4, 'the primary, the two entries, and the value as written (it may be one passphrase)');
    assert.equal(r.decrypt(old, ...CTX), 'x');
    const e = throwsCode(assert, () => ale.KeyRing.fromEnv({}), 'ALE_INVALID_KEY');
    assert.match(e.message, /ENCRYPTION_KEY/);
    // a refused secret is named by position, never quoted: a value no message could contain by chance
    const refused = 'prev-Qx7-not-32-chars';
    const p = throwsCode(assert, () => ale.KeyRing.fromEnv({ ENCRYPTION_KEY: SECRET, ENCRYPTION_KEY_PREVIOUS: refused }), 'ALE_INVALID_KEY');
    assert.match(p.message, /ENCRYPTION_KEY_PREVIOUS\[0\]/);
    assert.ok(!p.message.includes(refused) && !p.stack.includes(refused), p.message);
  });

  test('fromEnv: SECRET_ENCRYPTION_KEY when ENCRYPTION_KEY is empty; previous entries trimmed', () => {
    const hex = randomBytes(32).toString('hex');
    const viaSecret = ale.KeyRing.fromEnv({ ENCRYPTION_KEY: '', SECRET_ENCRYPTION_KEY: hex });
    assert.equal(viaSecret.stats()[0].kind, 'hex');
    assert.equal(new ale.KeyRing([hex]).decrypt(viaSecret.encrypt('s', ...CTX), ...CTX), 's');
    // a base64 key after a comma and a space stays a base64 key, not a passphrase
    const b64 = randomBytes(32).toString('base64');
    const old = new ale.KeyRing([b64]).encrypt('o', ...CTX);
    const r = ale.KeyRing.fromEnv({ ENCRYPTION_KEY: hex, ENCRYPTION_KEY_PREVIOUS: ` ${OLD_SECRET} ,\t${b64}\n, ` });
    assert.deepEqual(r.stats().filter((k) => !k.legacy).map((k) => k.kind), ['hex', 'passphrase', 'base64', 'passphrase']);
    assert.equal(r.keyIndex(old, ...CTX), 2);
  });

  test('fromEnv: a passphrase moved into ENCRYPTION_KEY_PREVIOUS as written opens its values, though the list cuts it at its commas or trims it', () => {
    const hex = randomBytes(32).toString('hex');
    const opens = (previousVars, passphrase) => {
      const sealed = new ale.KeyRing([passphrase]).encrypt('old value', ...CTX);
      return ale.KeyRing.fromEnv({ ENCRYPTION_KEY: hex, ...previousVars }).decrypt(sealed, ...CTX);
    };
    // halves of 32 characters or more: each is an entry, and the whole is one more secret
    const halves = 'a passphrase whose halves are each long, enough to be passphrases of their own';
    assert.equal(opens({ ENCRYPTION_KEY_PREVIOUS: halves }, halves), 'old value');
    const spaced = 'a passphrase typed with a space at its end ';
    assert.equal(opens({ ENCRYPTION_KEY_PREVIOUS: spaced }, spaced), 'old value');
    // a key with a stray line break is a passphrase to SveltyCMS; trimmed, the list reads a key: both are in the ring
    const keyWithBreak = `${randomBytes(32).toString('base64')}\n`;
    assert.equal(opens({ ENCRYPTION_KEY_PREVIOUS: keyWithBreak }, keyWithBreak), 'old value');
    // a half under 32 characters fails the list, loudly, naming the numbered variables, which take it as written
    const short = 'the first passphrase, chosen by the admin in 2024 before rotating';
    const refused = throwsCode(assert, () => ale.KeyRing.fromEnv({ ENCRYPTION_KEY: hex, ENCRYPTION_KEY_PREVIOUS: short }), 'ALE_INVALID_KEY');
    assert.match(refused.message, /ENCRYPTION_KEY_PREVIOUS\[0\].*ENCRYPTION_KEY_PREVIOUS_1/s);
    assert.ok(!refused.message.includes('chosen by'), refused.message);
    assert.equal(opens({ ENCRYPTION_KEY_PREVIOUS_1: short }, short), 'old value');
    assert.equal(opens({ ENCRYPTION_KEY_PREVIOUS: OLD_SECRET, ENCRYPTION_KEY_PREVIOUS_1: spaced, ENCRYPTION_KEY_PREVIOUS_2: short }, short), 'old value');
    // in order of n, gaps and empty ones passed over: dropping _1 keeps _2
    assert.equal(opens({ ENCRYPTION_KEY_PREVIOUS_2: short }, short), 'old value');
    assert.equal(opens({ ENCRYPTION_KEY_PREVIOUS_1: '', ENCRYPTION_KEY_PREVIOUS_12: short }, short), 'old value');
    const ordered = ale.KeyRing.fromEnv({ ENCRYPTION_KEY: hex, ENCRYPTION_KEY_PREVIOUS_10: OLD_SECRET, ENCRYPTION_KEY_PREVIOUS_2: hex });
    assert.deepEqual(ordered.stats().filter((k) => !k.legacy).map((k) => k.kind), ['hex', 'hex', 'passphrase'], '_2 before _10');
    // a list of raw keys is only a list; a ring given keyIds gets no secret it was not given
    const b64 = randomBytes(32).toString('base64');
    assert.equal(ale.KeyRing.fromEnv({ ENCRYPTION_KEY: hex, ENCRYPTION_KEY_PREVIOUS: ` ${hex} , ${b64} ` }).size, 3);
    const ids = ['AAAAAAAAAAAAAAAAAAAAAA', 'AQAAAAAAAAAAAAAAAAAAAA'];
    assert.equal(ale.KeyRing.fromEnv({ ENCRYPTION_KEY: hex, ENCRYPTION_KEY_PREVIOUS: spaced }, { keyIds: ids }).size, 2);
  });

  test('a 32-byte Uint8Array or Buffer is a raw key; other lengths are refused', () => {
    const key = randomBytes(32);
    const fromBuffer = new ale.KeyRing([key]);
    const fromView = new ale.KeyRing([new Uint8Array(key)]);
    assert.equal(fromBuffer.stats()[0].kind, 'bytes');
    // the same key as its hex spelling
    assert.equal(new ale.KeyRing([key.toString('hex')]).decrypt(fromView.encrypt('k', ...CTX), ...CTX), 'k');
    for (const n of [0, 16, 31, 33, 64]) {
      const e = throwsCode(assert, () => new ale.KeyRing([new Uint8Array(n)]), 'ALE_INVALID_KEY');
      assert.match(e.message, /secret #0/);
    }
    throwsCode(assert, () => new ale.KeyRing([new Uint16Array(16)]), 'ALE_INVALID_KEY');
  });

  test('fromEnv() defaults to process.env', () => {
    const saved = process.env.ENCRYPTION_KEY;
    try {
      delete process.env.ENCRYPTION_KEY;
      throwsCode(assert, () => ale.KeyRing.fromEnv(), 'ALE_INVALID_KEY');
      process.env.ENCRYPTION_KEY = SECRET;
      assert.equal(ale.KeyRing.fromEnv().decrypt(ring.encrypt('y', ...CTX), ...CTX), 'y');
    } finally {
      if (saved === undefined) delete process.env.ENCRYPTION_KEY;
      else process.env.ENCRYPTION_KEY = saved;
    }
  });

  test('key material is not reachable from JS', () => {
    assert.deepEqual(Reflect.ownKeys(ring), []);
    const text = JSON.stringify(ring) + String(ring) + inspect(ring, { showHidden: true, getters: true, depth: 5 });
    assert.ok(!text.includes(SECRET), text);
  });
});

describe('the process-wide ring', () => {
  test('before initKeyRing → ALE_NOT_INITIALIZED; after, module functions work', () => {
    // In a fresh process: `bun test` runs every file in one process with one
    // addon, so another file may already have called initKeyRing() here.
    const child = spawnSync(process.execPath, [fileURLToPath(new URL('./fixtures/not-initialized.cjs', import.meta.url)), SECRET], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH },
    });
    assert.equal(child.status, 0, child.stderr);
    assert.deepEqual(JSON.parse(child.stdout), {
      before: { initialized: false, encrypt: 'ALE_NOT_INITIALIZED', decrypt: 'ALE_NOT_INITIALIZED', blindIndex: 'ALE_NOT_INITIALIZED', blindIndexes: 'ALE_NOT_INITIALIZED' },
      after: { initialized: true, decrypt: 'global', roundTrip: 'again' },
    });
    ale.initKeyRing([SECRET]);
    const env = ale.encrypt('global', ...CTX);
    assert.equal(ring.decrypt(env, ...CTX), 'global');
    assert.equal(ale.decrypt(env, ...CTX), 'global');
  });

  test('initKeyRing() reads process.env.ENCRYPTION_KEY', () => {
    const saved = process.env.ENCRYPTION_KEY;
    try {
      process.env.ENCRYPTION_KEY = OLD_SECRET;
      ale.initKeyRing();
      assert.equal(new ale.KeyRing([OLD_SECRET]).decrypt(ale.encrypt('e', ...CTX), ...CTX), 'e');
    } finally {
      if (saved === undefined) delete process.env.ENCRYPTION_KEY;
      else process.env.ENCRYPTION_KEY = saved;
      ale.initKeyRing([SECRET]);
    }
  });
});

describe('hostile arguments', () => {
  test('wrong types throw ALE_INVALID_INPUT, never crash', () => {
    for (const bad of [undefined, null, 42, {}, [], Symbol('s'), 10n, () => 'x', Buffer.from('x')]) {
      throwsCode(assert, () => ring.encrypt(bad, ...CTX), 'ALE_INVALID_INPUT');
      throwsCode(assert, () => ring.decrypt(bad, ...CTX), 'ALE_INVALID_INPUT');
      throwsCode(assert, () => ring.encrypt('x', bad, 'c', 'f'), 'ALE_INVALID_INPUT');
      throwsCode(assert, () => ring.decrypt('v1:x', 't', 'c', bad), 'ALE_INVALID_INPUT');
    }
    throwsCode(assert, () => ring.encrypt(), 'ALE_INVALID_INPUT');
  });

  test('a 64 MiB value round-trips, in a sync and an async call', async () => {
    const huge = 'ab€'.repeat(16 << 20).slice(0, 64 << 20);
    const env = ring.encrypt(huge, ...CTX);
    assert.equal(env.length, 'v1:'.length + 22 + 1 + 22 + 1 + Math.ceil((Buffer.byteLength(huge) * 4) / 3));
    assert.equal(await ring.decryptAsync(env, ...CTX), huge);
  });

  test('a value whose envelope would exceed the engine\'s longest string throws a catchable error', { skip: process.versions.bun ? 'JavaScriptCore allows longer strings than memory here allows testing' : false }, async () => {
    const { constants } = await import('node:buffer');
    const plain = 'a'.repeat(Math.ceil(((constants.MAX_STRING_LENGTH - 43) * 3) / 4));
    // past the default maximum envelope length, which refuses it first: raised here
    const roomy = new ale.KeyRing([SECRET], { maxEnvelopeLength: 2 ** 40 });
    // the engine refuses the string: its own code, not the caller's input error
    const refused = throwsCode(assert, () => roomy.encrypt(plain, ...CTX), 'ALE_ENGINE_FAILURE');
    assert.match(refused.message, /refused: \S/, 'with a reason');
    await assert.rejects(roomy.encryptAsync(plain, ...CTX), (e) => e.code === 'ALE_ENGINE_FAILURE' && /refused: \S/.test(e.message));
    assert.equal(roomy.decrypt(roomy.encrypt('still fine', ...CTX), ...CTX), 'still fine');
    throwsCode(assert, () => ring.encrypt(plain, ...CTX), 'ALE_ENVELOPE_TOO_LARGE');
  });

  test('lone surrogates are refused, not silently replaced', () => {
    const long = 'long text '.repeat(20); // past the short-string path
    for (const s of ['a\uD800b', '\uDC00', 'x\uDBFF', '😀\uD83D', `${long}\uD800`, `\uDFFF${long}`, `${long}é\uD800${long}`]) {
      throwsCode(assert, () => ring.encrypt(s, ...CTX), 'ALE_INVALID_INPUT');
    }
    // a real U+FFFD, short or long, is text like any other
    for (const s of ['\uFFFD', `${long}\uFFFD${long}`, `${long}é\uFFFD😀`]) {
      assert.equal(ring.decrypt(ring.encrypt(s, ...CTX), ...CTX), s);
    }
    throwsCode(assert, () => ring.encrypt('x', 'ten\uD800', 'c', 'f'), 'ALE_INVALID_INPUT');
  });
});
