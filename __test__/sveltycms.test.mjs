// SveltyCMS compatibility: every value the CMS's field-encryption module
// writes opens here (KeyRing.decrypt and the drop-in), and every value this
// package writes by default opens in the CMS's module, for every kind of
// ENCRYPTION_KEY and every kind of JSON value. The CMS's module is the test
// oracle in fixtures/, written from shared/reference on node:crypto alone.
// Then the CMS's own behaviours, run against the drop-in.
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { ale, runtime, throwsCode, flipBit } from './helpers.mjs';
import * as cms from './fixtures/sveltycms-reference.mjs';

const require = createRequire(import.meta.url);
const dropIn = require('@sveltycms/ale/sveltycms');
const { sqliteTable, integer } = require('drizzle-orm/sqlite-core');
const { encryptedJson } = require('@sveltycms/ale/drizzle/sqlite');

const CTX = { tenantId: 'tenant-7', collectionId: 'posts' };
const FIELD = 'body';
const AAD = `${CTX.tenantId}:${CTX.collectionId}:${FIELD}`;

const VALUES = {
  'empty string': '',
  'unicode string': 'Grüße, 世界 👋 e\u0301',
  '70 KB string': 'lorem ipsum dolor sit amet, '.repeat(2560),
  integer: 42,
  float: -3.25e-7,
  zero: 0,
  true: true,
  false: false,
  null: null,
  array: [1, 'two', { three: [3] }, null],
  object: { title: 'Hello', tags: ['a', 'b'], nested: { n: 1, ok: false } },
  'empty object': {},
};

// 33 random bytes as base64 is 44 characters; 48 bytes is 64.
const bytes = (n) => randomBytes(n);
const urlWith = (ch) => {
  for (;;) {
    const s = bytes(32).toString('base64url');
    if (s.includes(ch)) return s;
  }
};
const lenientOnly = () => {
  // base64 with spaces: not strict base64 (the spaces), not base64url (no - or _),
  // so a passphrase, whose lenient base64 decoding gives 33 bytes.
  for (;;) {
    const b64 = bytes(33).toString('base64');
    if (!/[-_]/.test(b64)) return b64.match(/.{1,11}/g).join(' ');
  }
};

/** Each key kind: the env it is set through, and how the CMS wrote the values we read. */
const KEY_KINDS = {
  hex: { env: { ENCRYPTION_KEY: bytes(32).toString('hex') }, kind: 'hex' },
  'base64, 44 characters': { env: { ENCRYPTION_KEY: bytes(33).toString('base64') }, kind: 'base64' },
  'base64, 64 characters': { env: { ENCRYPTION_KEY: bytes(48).toString('base64') }, kind: 'base64' },
  "base64url with '-'": { env: { ENCRYPTION_KEY: urlWith('-') }, kind: 'base64url' },
  "base64url with '_'": { env: { ENCRYPTION_KEY: urlWith('_') }, kind: 'base64url' },
  passphrase: { env: { ENCRYPTION_KEY: 'the CMS admin typed this passphrase, not a key' }, kind: 'passphrase' },
  'passphrase, SHA-256 fallback only': {
    env: { ENCRYPTION_KEY: 'another passphrase, from before the HKDF release' },
    kind: 'passphrase',
    writtenWith: (m) => m.fallbacks[0],
    legacy: 'legacy-sha256',
  },
  'passphrase, lenient-base64 fallback only': {
    env: { ENCRYPTION_KEY: lenientOnly() },
    kind: 'passphrase',
    writtenWith: (m) => m.fallbacks[1],
    legacy: 'legacy-base64',
  },
  SECRET_ENCRYPTION_KEY: { env: { ENCRYPTION_KEY: '', SECRET_ENCRYPTION_KEY: bytes(32).toString('hex') }, kind: 'hex' },
};

const saved = {};
const ENV_NAMES = ['ENCRYPTION_KEY', 'SECRET_ENCRYPTION_KEY', 'ENCRYPTION_KEY_PREVIOUS'];
function useEnv(vars) {
  for (const name of ENV_NAMES) {
    if (name in vars) process.env[name] = vars[name];
    else delete process.env[name];
  }
  cms.resetFieldEncryptionKeyCache();
  dropIn.resetFieldEncryptionKeyCache();
}
before(() => {
  for (const name of ENV_NAMES) saved[name] = process.env[name];
  cms.setReferenceLogger(null);
});
after(() => {
  for (const name of ENV_NAMES) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
  dropIn.setFieldEncryptionLogger(undefined);
  dropIn.resetFieldEncryptionKeyCache();
});

const counts = [];

describe(`values SveltyCMS wrote open here, and the other way round (${runtime})`, () => {
  for (const [kindName, spec] of Object.entries(KEY_KINDS)) {
    test(kindName, () => {
      useEnv(spec.env);
      const raw = spec.env.ENCRYPTION_KEY || spec.env.SECRET_ENCRYPTION_KEY;
      const material = cms.resolveKeyMaterial(raw);
      assert.equal(material.kind, spec.kind, 'the oracle resolves the key kind the test meant');
      const ring = ale.KeyRing.fromEnv();
      const stats = ring.stats();
      assert.equal(stats[0].kind, spec.kind);
      let opened = 0;
      let written = 0;
      for (const [valueName, value] of Object.entries(VALUES)) {
        // CMS → here: the CMS's module, or its key derivation from before (a fallback key)
        const stored = spec.writtenWith
          ? cms.encryptWithKey(spec.writtenWith(material), JSON.stringify(value), AAD, 16)
          : cms.encryptFieldValueSync(value, CTX, FIELD);
        assert.equal(stored.split(':')[1].length, 22, 'the CMS writes 16-byte IVs');
        assert.deepEqual(JSON.parse(ring.decrypt(stored, CTX.tenantId, CTX.collectionId, FIELD)), value, valueName);
        assert.deepEqual(dropIn.decryptFieldValueSync(stored, CTX, FIELD), value, valueName);
        const index = ring.keyIndex(stored, CTX.tenantId, CTX.collectionId, FIELD);
        if (spec.legacy) {
          assert.ok(index >= ring.size, 'a legacy key needs rotation');
          assert.equal(stats[index].kind, spec.legacy);
        } else {
          assert.equal(index, 0);
        }
        opened++;
        // here → CMS: the drop-in, and KeyRing.encrypt of the JSON text
        for (const envelope of [dropIn.encryptFieldValueSync(value, CTX, FIELD), ring.encrypt(JSON.stringify(value), CTX.tenantId, CTX.collectionId, FIELD)]) {
          assert.equal(envelope.split(':')[1].length, 22, 'the default envelope has a 16-byte IV');
          assert.deepEqual(cms.decryptFieldValueSync(envelope, CTX, FIELD), value, valueName);
        }
        written++;
      }
      counts.push(`${kindName}: ${opened} opened, ${written} read back by the CMS`);
    });
  }

  test('a 12-byte-IV envelope is refused by the CMS (why 16 is the default)', () => {
    useEnv(KEY_KINDS.hex.env);
    const short = new ale.KeyRing([process.env.ENCRYPTION_KEY], { ivLength: 12 }).encrypt('"x"', CTX.tenantId, CTX.collectionId, FIELD);
    assert.equal(cms.decryptFieldValueSync(short, CTX, FIELD), null);
    assert.equal(dropIn.decryptFieldValueSync(short, CTX, FIELD), 'x', 'the drop-in reads both lengths');
  });

  after(() => console.log(`SveltyCMS compatibility on ${runtime}:\n  ${counts.join('\n  ')}`));
});

describe('the drop-in keeps the CMS module’s behaviour', () => {
  const reports = [];
  before(() => useEnv(KEY_KINDS.passphrase.env));
  afterEach(() => {
    reports.length = 0;
    dropIn.setFieldEncryptionLogger((r) => reports.push(r));
  });

  test('exports the module’s functions under the same names', () => {
    for (const name of [
      'encryptFieldValueSync',
      'decryptFieldValueSync',
      'encryptFieldValue',
      'decryptFieldValue',
      'encryptDocumentFieldsSync',
      'decryptDocumentFieldsSync',
      'encryptDocumentFields',
      'decryptDocumentFields',
      'isFieldEncryptionEnvelope',
      'resetFieldEncryptionKeyCache',
    ]) {
      assert.equal(typeof dropIn[name], 'function', name);
      assert.equal(dropIn[name].length, cms[name].length, `${name} takes as many arguments`);
    }
  });

  test('round trip, a fresh IV every time, and idempotence', async () => {
    const a = dropIn.encryptFieldValueSync({ x: 1 }, CTX, FIELD);
    const b = dropIn.encryptFieldValueSync({ x: 1 }, CTX, FIELD);
    assert.notEqual(a, b);
    assert.notEqual(a.split(':')[1], b.split(':')[1]);
    assert.deepEqual(dropIn.decryptFieldValueSync(a, CTX, FIELD), { x: 1 });
    assert.equal(dropIn.encryptFieldValueSync(a, CTX, FIELD), a);
    assert.equal(await dropIn.encryptFieldValue(a, CTX, FIELD), a);
    assert.deepEqual(await dropIn.decryptFieldValue(b, CTX, FIELD), { x: 1 });
    assert.equal(dropIn.isFieldEncryptionEnvelope(a), true);
    assert.equal(dropIn.isFieldEncryptionEnvelope('v1:a:b:'), false);
  });

  test('a tampered value, or one from another tenant, collection or field, gives null and a coded report', () => {
    const secret = 'ssn 078-05-1120';
    const env = dropIn.encryptFieldValueSync(secret, CTX, FIELD);
    const cases = [
      [flipBit(env, 3, 5), CTX, FIELD, 'ALE_AUTH_FAILED'],
      [flipBit(env, 1, 100), CTX, FIELD, 'ALE_AUTH_FAILED'],
      [env, { ...CTX, tenantId: 'tenant-8' }, FIELD, 'ALE_AUTH_FAILED'],
      [env, { ...CTX, collectionId: 'pages' }, FIELD, 'ALE_AUTH_FAILED'],
      [env, CTX, 'title', 'ALE_AUTH_FAILED'],
    ];
    for (const [stored, ctx, field, code] of cases) {
      assert.equal(dropIn.decryptFieldValueSync(stored, ctx, field), null);
      const report = reports.at(-1);
      assert.equal(report.code, code);
      assert.equal(report.fieldName, field);
      assert.ok(!JSON.stringify(report).includes('078-05'), 'no plaintext in the report');
    }
    assert.equal(reports.length, cases.length);
  });

  test('JSON that does not parse gives null with ALE_INVALID_JSON; the strict variant throws it', async () => {
    const notJson = new ale.KeyRing([process.env.ENCRYPTION_KEY]).encrypt('secret words, not JSON', CTX.tenantId, CTX.collectionId, FIELD);
    assert.equal(dropIn.decryptFieldValueSync(notJson, CTX, FIELD), null);
    assert.equal(reports.at(-1).code, 'ALE_INVALID_JSON');
    const e = throwsCode(assert, () => dropIn.decryptFieldValueStrictSync(notJson, CTX, FIELD), 'ALE_INVALID_JSON');
    assert.ok(!e.message.includes('secret words') && !e.stack.includes('secret words'));
    await assert.rejects(dropIn.decryptFieldValueStrict(flipBit(notJson, 2, 0), CTX, FIELD), { code: 'ALE_AUTH_FAILED' });
    assert.equal(dropIn.decryptFieldValueStrictSync('plain', CTX, FIELD), 'plain');
  });

  test('legacy plaintext passes through', () => {
    for (const legacy of ['plain text', 'v2:not:ours:x', 'v1:only:three', 'v1:a:b:c:', 'V1:a:b:c', ' v1:a:b:c', 'v1:a+:b:c', 17, true, null, undefined, { a: 1 }]) {
      assert.equal(cms.isFieldEncryptionEnvelope(legacy), false, 'the CMS reads it as it is too');
      assert.deepEqual(dropIn.decryptFieldValueSync(legacy, CTX, FIELD), legacy);
    }
    assert.equal(reports.length, 0);
  });

  test('a damaged envelope gives null and a report, as in the CMS, never its text: a changed character, a part cut short or too long, stray bits', () => {
    for (const [i, value] of ['s', 'se', 'sec', 'secr', 'secre', 'secret', 42, { a: 1 }].entries()) {
      const env = dropIn.encryptFieldValueSync(value, CTX, FIELD);
      const [iv, tag, body] = env.split(':').slice(1);
      const damaged = [
        env.slice(0, -2) + 'xx', // the CMS's own test
        `v1:${iv.slice(0, -1)}:${tag}:${body}`,
        `v1:${iv}A:${tag}:${body}`,
        `v1:${iv}:${tag.slice(0, -1)}:${body}`,
        `v1:${iv}:${tag}:${body.slice(0, -1)}`,
        `v1:AAAA:${tag}:${body}`,
      ].filter((d) => d !== env);
      // Stray bits in the IV's last character: Node's lenient base64 drops them and the CMS opens the value; the core's
      // strict base64 refuses them, so that no stored value has two spellings. The CMS never writes one.
      const strayBits = `v1:${iv.slice(0, -1)}B:${tag}:${body}`; // a canonical IV ends in A, Q, g or w
      // The CMS's own damage ("xx") changes only stray bits of the last character when the bytes it stands for end so
      // (1 value in 256 of some lengths): the CMS then opens it, and only the drop-in's refusal is checked.
      const sameBytes = (d) => d.split(':').slice(1).every((part, k) => Buffer.from(part, 'base64url').equals(Buffer.from([iv, tag, body][k], 'base64url')));
      for (const d of [...damaged, strayBits]) {
        assert.equal(cms.isFieldEncryptionEnvelope(d), true);
        const before = reports.length;
        assert.equal(dropIn.decryptFieldValueSync(d, CTX, FIELD), null, `${i}: ${d}`);
        if (!sameBytes(d)) assert.equal(cms.decryptFieldValueSync(d, CTX, FIELD), null, `the oracle agrees: ${d}`);
        assert.equal(reports.length, before + 1, 'reported');
        assert.ok(['ALE_AUTH_FAILED', 'ALE_MALFORMED_ENVELOPE'].includes(reports.at(-1).code), reports.at(-1).code);
        assert.equal(dropIn.decryptDocumentFieldsSync({ f: d }, ['f'], CTX).f, null);
        assert.throws(() => dropIn.decryptFieldValueStrictSync(d, CTX, FIELD), (e) => ['ALE_AUTH_FAILED', 'ALE_MALFORMED_ENVELOPE'].includes(e.code));
      }
    }
  });

  test('no document or no field names: returned as they are; no context: a failed call, coded', () => {
    for (const doc of [null, undefined]) {
      assert.equal(dropIn.encryptDocumentFieldsSync(doc, ['a'], CTX), doc);
      assert.equal(dropIn.decryptDocumentFieldsSync(doc, ['a'], CTX), doc);
      assert.equal(dropIn.encryptDocumentFieldsStrictSync(doc, ['a'], CTX), doc);
    }
    assert.deepEqual(dropIn.encryptDocumentFieldsSync({ a: 'x' }, undefined, CTX), { a: 'x' }, 'no field names');
    const doc = { a: 'x' };
    assert.deepEqual(dropIn.encryptDocumentFieldsSync(doc, [], CTX), { a: 'x' });
    const sealed = dropIn.encryptFieldValueSync('x', CTX, FIELD);
    assert.equal(dropIn.decryptFieldValueSync(sealed, undefined, FIELD), null);
    assert.equal(reports.at(-1).code, 'ALE_INVALID_CONTEXT');
    assert.equal(cms.decryptFieldValueSync(sealed, undefined, FIELD), null, 'the oracle gives null too');
  });

  test("a value that cannot be encrypted is the CMS's FIELD_ENCRYPTION_FAILED (status 500, an AppError to its handlers), with the package's code as the cause", () => {
    for (const [value, ctx, cause] of [[undefined, CTX, 'ALE_INVALID_INPUT'], [() => 1, CTX, 'ALE_INVALID_INPUT'], [1n, CTX, 'ALE_INVALID_INPUT'], ['x', undefined, 'ALE_INVALID_CONTEXT'], ['x', { ...CTX, tenantId: 'a:b' }, 'ALE_INVALID_CONTEXT']]) {
      const e = throwsCode(assert, () => dropIn.encryptFieldValueSync(value, ctx, FIELD), 'FIELD_ENCRYPTION_FAILED');
      assert.deepEqual([e.name, e.status, e.cause?.code], ['AppError', 500, cause]);
    }
    const doc = { a: 'kept', b: undefined, c: 1n };
    throwsCode(assert, () => dropIn.encryptDocumentFieldsSync(doc, ['b', 'c'], CTX), 'FIELD_ENCRYPTION_FAILED');
    assert.equal(doc.c, 1n, 'the field that failed is left as it was');
  });

  test('documents: in place, own names only, empty values and envelopes skipped', async () => {
    const proto = { inherited: 'not mine' };
    const doc = Object.assign(Object.create(proto), { title: 'T', body: { blocks: [1] }, empty: '', none: null, undef: undefined, count: 0 });
    const already = dropIn.encryptFieldValueSync('kept', CTX, 'kept');
    doc.kept = already;
    const names = ['title', 'body', 'empty', 'none', 'undef', 'count', 'kept', 'inherited', 'missing'];
    assert.equal(dropIn.encryptDocumentFieldsSync(doc, names, CTX), doc);
    for (const name of ['title', 'body', 'count']) assert.equal(cms.isFieldEncryptionEnvelope(doc[name]), true, name);
    assert.equal(doc.kept, already);
    assert.deepEqual([doc.empty, doc.none, doc.undef, doc.inherited, 'missing' in doc], ['', null, undefined, 'not mine', false]);
    // the CMS's module reads the document the drop-in wrote, field by field
    assert.equal(cms.decryptFieldValueSync(doc.title, CTX, 'title'), 'T');
    doc.body = flipBit(doc.body, 3, 1);
    assert.equal(await dropIn.decryptDocumentFields(doc, names, CTX), doc);
    assert.deepEqual([doc.title, doc.body, doc.count, doc.kept], ['T', null, 0, 'kept']);
    assert.equal(reports.length, 1, 'the failed field is reported');
    const again = await dropIn.encryptDocumentFields({ a: 'x' }, ['a'], CTX);
    assert.equal(dropIn.decryptDocumentFieldsSync(again, ['a'], CTX).a, 'x');
  });

  test('no key: FIELD_ENCRYPTION_UNAVAILABLE with status 503, sync and async; a key set later is picked up', async () => {
    for (const env of [{}, { ENCRYPTION_KEY: 'too short' }, { ENCRYPTION_KEY: '', SECRET_ENCRYPTION_KEY: '' }]) {
      useEnv(env);
      const stored = cms.encryptWithKey(Buffer.alloc(32, 1), '"x"', AAD, 16);
      for (const call of [() => dropIn.encryptFieldValueSync('x', CTX, FIELD), () => dropIn.decryptFieldValueSync(stored, CTX, FIELD)]) {
        const e = throwsCode(assert, call, 'FIELD_ENCRYPTION_UNAVAILABLE');
        assert.equal(e.status, 503);
        assert.equal(e.name, 'AppError', "the CMS's isAppError takes it for its own: a 503, not a 500");
        assert.ok(!e.message.includes('too short'));
      }
      await assert.rejects(dropIn.encryptFieldValue('x', CTX, FIELD), { code: 'FIELD_ENCRYPTION_UNAVAILABLE', status: 503 });
      await assert.rejects(dropIn.decryptFieldValue(stored, CTX, FIELD), { code: 'FIELD_ENCRYPTION_UNAVAILABLE', status: 503 });
      await assert.rejects(dropIn.encryptDocumentFields({ a: 'x' }, ['a'], CTX), { code: 'FIELD_ENCRYPTION_UNAVAILABLE' });
    }
    useEnv(KEY_KINDS.hex.env);
    assert.equal(cms.decryptFieldValueSync(dropIn.encryptFieldValueSync('x', CTX, FIELD), CTX, FIELD), 'x');
  });

  test('the key is cached until resetFieldEncryptionKeyCache()', () => {
    useEnv(KEY_KINDS.hex.env);
    const before = dropIn.encryptFieldValueSync('x', CTX, FIELD);
    process.env.ENCRYPTION_KEY = KEY_KINDS['base64, 44 characters'].env.ENCRYPTION_KEY;
    assert.equal(dropIn.decryptFieldValueSync(before, CTX, FIELD), 'x', 'still the cached key');
    dropIn.resetFieldEncryptionKeyCache();
    assert.equal(dropIn.decryptFieldValueSync(before, CTX, FIELD), null, 'the new key does not open it');
  });
});

describe('the Drizzle JSON column stores what the CMS stores', () => {
  test('encryptedJson opens CMS-written values, and the CMS opens its values', () => {
    useEnv(KEY_KINDS['base64, 64 characters'].env);
    const keyRing = ale.KeyRing.fromEnv();
    const table = sqliteTable('posts', {
      id: integer('id').primaryKey(),
      body: encryptedJson('body', { collection: CTX.collectionId, tenant: CTX.tenantId, keyRing }),
    });
    for (const value of Object.values(VALUES)) {
      if (value === null) continue; // Drizzle stores SQL NULL for null, never an envelope
      const fromCms = cms.encryptFieldValueSync(value, CTX, FIELD);
      assert.deepEqual(table.body.mapFromDriverValue(fromCms), value);
      assert.deepEqual(cms.decryptFieldValueSync(table.body.mapToDriverValue(value), CTX, FIELD), value);
    }
    // the CMS leaves an empty string unencrypted in a document, and reads it back as it is: so does legacyPlaintext, and only it
    const { body } = cms.encryptDocumentFieldsSync({ body: '' }, ['body'], CTX);
    assert.equal(body, '');
    const legacy = sqliteTable('posts', { body: encryptedJson('body', { collection: CTX.collectionId, tenant: CTX.tenantId, keyRing, legacyPlaintext: true }) });
    assert.equal(legacy.body.mapFromDriverValue(body), '');
    assert.throws(() => table.body.mapFromDriverValue(body), { code: 'ALE_MALFORMED_ENVELOPE' });
  });
});

describe('checking a database before switching (ale-check)', () => {
  test('counts values per key and failures; exits 1 when some do not open', async () => {
    const { spawnSync } = await import('node:child_process');
    const { join } = await import('node:path');
    const primary = 'the new primary passphrase, long enough to pass';
    const previous = randomBytes(32).toString('hex');
    const rows = [];
    const add = (value, fieldName = FIELD) => rows.push({ value, tenantId: CTX.tenantId, collectionId: CTX.collectionId, fieldName });
    const material = cms.resolveKeyMaterial(primary);
    const aad = (f) => `${CTX.tenantId}:${CTX.collectionId}:${f}`;
    for (let i = 0; i < 3; i++) add(cms.encryptWithKey(material.key, JSON.stringify(`p${i}`), aad(FIELD)));
    for (let i = 0; i < 2; i++) add(cms.encryptWithKey(Buffer.from(previous, 'hex'), '"old"', aad(FIELD)));
    add(cms.encryptWithKey(material.fallbacks[0], '"older"', aad(FIELD)));
    add('legacy plaintext');
    add(cms.encryptWithKey(material.key, '"moved"', aad('title')), FIELD); // written for another field
    // they authenticate under the primary key, but the drop-in reads them as null: not opened
    add(cms.encryptWithKey(material.key, 'not JSON', aad(FIELD)));
    add(cms.encryptWithKey(material.key, Buffer.from([0x22, 0xff, 0x22]), aad(FIELD))); // not UTF-8
    const input = rows.map((r) => JSON.stringify(r)).join('\n');
    const bin = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', 'bin', 'ale-check.mjs');
    const run = (extra = [], env = { ENCRYPTION_KEY: primary, ENCRYPTION_KEY_PREVIOUS: previous }) =>
      spawnSync(process.execPath, [bin, ...extra], { input, encoding: 'utf8', env: { PATH: process.env.PATH, ...env } });
    const r = run();
    assert.equal(r.status, 1, r.stderr);
    for (const line of ['checked 10 values', '3 opened by the primary key', '2 opened by a previous key', "1 opened by a passphrase's legacy key", '1 legacy plaintext', '3 did not open: ALE_AUTH_FAILED × 1, ALE_INVALID_JSON × 1, ALE_INVALID_INPUT × 1', 'key 0 (secret #0, passphrase): 3']) {
      assert.ok(r.stdout.includes(line), `${line}\n${r.stdout}`);
    }
    assert.ok(!r.stdout.includes('p0') && !r.stdout.includes(primary), 'no value or key is printed');
    const sampled = run(['--sample', '3']);
    assert.equal(sampled.status, 0, sampled.stdout);
    assert.ok(sampled.stdout.includes('checked 3 values'));
    const noKey = run([], {});
    assert.equal(noKey.status, 2);
    assert.match(noKey.stderr, /FIELD_ENCRYPTION_UNAVAILABLE/);
    // bad input is 2, never a pass: a file that cannot be read, a line without "value", nothing to check
    const env = { PATH: process.env.PATH, ENCRYPTION_KEY: primary };
    const badInput = [
      [[join(bin, '..', 'no-such-file.jsonl')], '', /cannot be read \(ENOENT\)/],
      [[], `${JSON.stringify({ tenantId: 't', collectionId: 'c', fieldName: 'f' })}\n`, /line 1 has no "value"/],
      [[], '', /no values to check/],
    ];
    for (const [extra, text, message] of badInput) {
      const r2 = spawnSync(process.execPath, [bin, ...extra], { input: text, encoding: 'utf8', env });
      assert.equal(r2.status, 2, r2.stderr);
      assert.match(r2.stderr, message);
    }
  });
});

describe('where the drop-in is stricter than the CMS’s module', () => {
  const reports = [];
  before(() => {
    useEnv(KEY_KINDS.passphrase.env);
    dropIn.setFieldEncryptionLogger((r) => reports.push(r));
  });
  afterEach(() => (reports.length = 0));
  after(() => dropIn.setFieldEncryptionLogger(undefined));

  test('text that only looks like an envelope is encrypted, and a look-alike the CMS stored as it is reads as null, as in the CMS', () => {
    const lookalike = 'v1:sk_live_abc:acct:prod';
    assert.equal(cms.isFieldEncryptionEnvelope(lookalike), true, 'the CMS’s loose test takes it for an envelope');
    assert.equal(dropIn.isFieldEncryptionEnvelope(lookalike), false);
    const sealed = dropIn.encryptFieldValueSync(lookalike, CTX, FIELD);
    assert.notEqual(sealed, lookalike);
    assert.equal(dropIn.isFieldEncryptionEnvelope(sealed), true);
    assert.equal(dropIn.decryptFieldValueSync(sealed, CTX, FIELD), lookalike);
    assert.equal(cms.decryptFieldValueSync(sealed, CTX, FIELD), lookalike, 'the CMS opens what the drop-in wrote');
    const doc = dropIn.encryptDocumentFieldsSync({ token: lookalike }, ['token'], CTX);
    assert.equal(dropIn.decryptFieldValueSync(doc.token, CTX, 'token'), lookalike);
    // what the CMS's module stored for it: the text itself, unencrypted
    const storedByCms = cms.encryptFieldValueSync(lookalike, CTX, FIELD);
    assert.equal(storedByCms, lookalike);
    assert.equal(cms.decryptFieldValueSync(storedByCms, CTX, FIELD), null, 'the CMS reads its own look-alike as null');
    assert.equal(dropIn.decryptFieldValueSync(storedByCms, CTX, FIELD), null);
    assert.deepEqual(reports.map((r) => r.code), ['ALE_MALFORMED_ENVELOPE']);
    const cutIv = sealed.replace(/^v1:[^:]+:/, 'v1:AAAA:'); // an IV of 4 characters
    const report = dropIn.checkStoredValues([storedByCms, 'plain', cutIv, sealed].map((value) => ({ value, ...CTX, fieldName: FIELD })));
    assert.deepEqual(
      [report.plaintext, report.envelopeLike, report.failed, report.primary],
      [1, 2, { ALE_MALFORMED_ENVELOPE: 2 }, 1],
      'a look-alike and a damaged envelope are counted apart from plaintext, as values that do not open',
    );
  });

  test('text shaped like an envelope with an empty ciphertext, which neither module ever writes, is no envelope to the drop-in either: it is encrypted and reads back', () => {
    const empty = `v1:${'A'.repeat(22)}:${'A'.repeat(22)}:`;
    assert.equal(cms.isFieldEncryptionEnvelope(empty), false, 'the CMS requires a ciphertext');
    assert.equal(dropIn.isFieldEncryptionEnvelope(empty), false);
    const doc = dropIn.encryptDocumentFieldsSync({ note: empty }, ['note'], CTX);
    assert.notEqual(doc.note, empty);
    assert.equal(dropIn.decryptDocumentFieldsSync(doc, ['note'], CTX).note, empty);
    assert.equal(reports.length, 0);
  });

  test('refuseEnvelopes: the strict encrypt refuses another row’s envelope pasted in as input', async () => {
    const victim = dropIn.encryptFieldValueSync('victim’s secret', CTX, FIELD);
    assert.equal(dropIn.encryptFieldValueSync(victim, CTX, FIELD), victim, 'the default keeps the CMS’s pass-through');
    assert.equal(dropIn.encryptFieldValueStrictSync(victim, CTX, FIELD), victim);
    const e = throwsCode(assert, () => dropIn.encryptFieldValueStrictSync(victim, CTX, FIELD, { refuseEnvelopes: true }), 'ALE_INVALID_INPUT');
    assert.ok(!e.message.includes(victim.split(':')[3]), 'the envelope is not quoted');
    await assert.rejects(dropIn.encryptFieldValueStrict(victim, CTX, FIELD, { refuseEnvelopes: true }), { code: 'ALE_INVALID_INPUT' });
    const doc = { title: 'mine', body: victim };
    throwsCode(assert, () => dropIn.encryptDocumentFieldsStrictSync(doc, ['title', 'body'], CTX, { refuseEnvelopes: true }), 'ALE_INVALID_INPUT');
    assert.deepEqual(doc, { title: 'mine', body: victim }, 'a refused document is left as it was');
    await assert.rejects(dropIn.encryptDocumentFieldsStrict({ body: victim }, ['body'], CTX, { refuseEnvelopes: true }), { code: 'ALE_INVALID_INPUT' });
    const saved = dropIn.encryptDocumentFieldsStrictSync({ title: 'mine', empty: '' }, ['title', 'empty'], CTX, { refuseEnvelopes: true });
    assert.deepEqual([dropIn.decryptFieldValueSync(saved.title, CTX, 'title'), saved.empty], ['mine', '']);
    const fresh = dropIn.encryptFieldValueStrictSync({ a: 1 }, CTX, FIELD, { refuseEnvelopes: true });
    assert.deepEqual(dropIn.decryptFieldValueStrictSync(fresh, CTX, FIELD), { a: 1 });
  });

  test('context ids that are not strings: the default spells them as the CMS does and reports it once; the strict variants refuse them', () => {
    const loose = { tenantId: undefined, collectionId: 'posts' };
    const sealed = dropIn.encryptFieldValueSync('x', loose, FIELD);
    assert.equal(dropIn.decryptFieldValueSync(sealed, { tenantId: 'undefined', collectionId: 'posts' }, FIELD), 'x', 'the CMS’s template-literal spelling');
    dropIn.encryptFieldValueSync('y', { tenantId: { id: 1 }, collectionId: 'posts' }, FIELD);
    assert.deepEqual(reports.map((r) => [r.code, r.tenantId]), [['ALE_INVALID_CONTEXT', 'undefined']], 'reported once');
    throwsCode(assert, () => dropIn.encryptFieldValueSync('x', undefined, FIELD), 'FIELD_ENCRYPTION_FAILED', 'no context at all fails the call, as in the CMS');
    for (const [ctx, field] of [[loose, FIELD], [{ tenantId: { id: 1 }, collectionId: 'posts' }, FIELD], [{ ...CTX, tenantId: '' }, FIELD], [CTX, 7], [undefined, FIELD]]) {
      throwsCode(assert, () => dropIn.encryptFieldValueStrictSync('x', ctx, field), 'ALE_INVALID_CONTEXT');
      throwsCode(assert, () => dropIn.decryptFieldValueStrictSync(sealed, ctx, field), 'ALE_INVALID_CONTEXT');
    }
  });
});
