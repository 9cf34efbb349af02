// The transit KEK's request and answer bytes (SECURITY.md, "Key hygiene";
// the third security review's item 3): a data key crosses to and from the
// key service as base64 inside JSON, and a JS string cannot be wiped, so
// the base64 of a key must never become one. JSON.stringify and JSON.parse
// are watched while the bodies are made and read: no string they see or
// make holds a key's base64, the bytes that held it are wiped, and the key
// comes back as bytes that the caller can wipe.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { batchBody, parseAnswer, readCapped, resultsOf, wipeResult, ANSWER_CAP } from '../dist/esm/drizzle/keys/transit-body.js';

/** Runs `fn` with JSON.stringify and JSON.parse recording every string they make or read. */
function watchingJson(fn) {
  const seen = [];
  const [stringify, parse] = [JSON.stringify, JSON.parse];
  JSON.stringify = (...args) => {
    const out = stringify(...args);
    seen.push(out);
    return out;
  };
  JSON.parse = (text, ...rest) => {
    seen.push(String(text));
    return parse(text, ...rest);
  };
  try {
    return { result: fn(), seen };
  } finally {
    [JSON.stringify, JSON.parse] = [stringify, parse];
  }
}

test("a batch request's body is bytes with each key written in as base64, and no JSON string ever holds a key", () => {
  const keys = [randomBytes(32), randomBytes(32), randomBytes(31)];
  const items = [
    { fields: { associated_data: 'YWNtZQ==' }, plaintext: keys[0] },
    { fields: { ciphertext: 'vault:v1:abc' } },
    { fields: { associated_data: 'Z2xvYmV4', note: 'a "quoted" \\ value' }, plaintext: keys[1] },
    { fields: {}, plaintext: keys[2] },
  ];
  const { result: body, seen } = watchingJson(() => batchBody(items));
  assert.ok(Buffer.isBuffer(body), 'bytes, which the caller wipes after the request');
  for (const key of keys) assert.ok(!seen.some((s) => s.includes(key.toString('base64'))), 'a JSON string held a key');
  const sent = JSON.parse(body.toString('utf8')).batch_input;
  assert.deepEqual(
    sent.map((item) => item.plaintext),
    [keys[0].toString('base64'), undefined, keys[1].toString('base64'), keys[2].toString('base64')],
  );
  assert.deepEqual(sent[2].note, 'a "quoted" \\ value');
});

test("an answer's keys come back as bytes, its body is wiped, and no JSON string ever held a key", () => {
  const keys = [randomBytes(32), randomBytes(32)];
  const text = JSON.stringify({ data: { batch_results: [{ plaintext: keys[0].toString('base64') }, { error: 'cipher: message authentication failed' }, { plaintext: keys[1].toString('base64') }] } });
  const bytes = Buffer.from(text);
  const { result: answer, seen } = watchingJson(() => parseAnswer(bytes));
  assert.ok(bytes.every((b) => b === 0), 'the body is wiped');
  for (const key of keys) assert.ok(!seen.some((s) => s.includes(key.toString('base64'))), 'a JSON string held a key');
  const results = resultsOf(answer.data);
  assert.ok(Buffer.isBuffer(results[0].plaintext) && results[0].plaintext.equals(keys[0]));
  assert.equal(results[1].error, 'cipher: message authentication failed');
  assert.ok(results[2].plaintext.equals(keys[1]));
  results.forEach(wipeResult);
  assert.ok(results[0].plaintext.every((b) => b === 0) && results[2].plaintext.every((b) => b === 0), 'wipeResult wipes a key no caller took');
});

test('an answer that is not the engine’s shape gives no key, and wipes what it took out', () => {
  // a plaintext outside batch_results: not an answer to a batch
  const stray = Buffer.from(JSON.stringify({ data: { plaintext: randomBytes(32).toString('base64') } }));
  assert.equal(parseAnswer(stray), undefined);
  assert.ok(stray.every((b) => b === 0));
  // not JSON
  const broken = Buffer.from('{"data":{"batch_results":[{"plaintext":"QUJD"}]');
  assert.equal(parseAnswer(broken), undefined);
  assert.ok(broken.every((b) => b === 0));
  // a plaintext that is not plain base64 is not read
  const odd = Buffer.from('{"data":{"batch_results":[{"plaintext":"not base64!"}]}}');
  assert.equal(resultsOf(parseAnswer(odd).data)[0].plaintext, null);
});

test('readCapped wipes the chunks it read, and stops past the cap', async () => {
  const chunks = [Buffer.from('{"data":'), Buffer.from('{"batch_results":[]}}')];
  const copies = chunks.map((c) => Buffer.from(c));
  const stream = new ReadableStream({
    start(controller) {
      for (const c of chunks) controller.enqueue(new Uint8Array(c.buffer, c.byteOffset, c.byteLength));
      controller.close();
    },
  });
  const got = await readCapped(new Response(stream), () => assert.fail('not aborted'));
  assert.deepEqual(got, Buffer.concat(copies));
  assert.ok(chunks.every((c) => c.every((b) => b === 0)), 'the chunks are wiped');
  let aborted = 0;
  const big = new ReadableStream({
    pull(controller) {
      controller.enqueue(new Uint8Array(64 * 1024));
    },
  });
  assert.equal(await readCapped(new Response(big), () => aborted++), null);
  assert.equal(aborted, 1);
  const declared = new Response('x', { headers: { 'content-length': String(ANSWER_CAP + 1) } });
  assert.equal(await readCapped(declared, () => aborted++), null);
  assert.equal(aborted, 2);
});

test('the watch catches a key in a JSON string: the bodies as made before this (JSON of the base64, 8a42181)', () => {
  const key = randomBytes(32);
  const { seen } = watchingJson(() => {
    JSON.stringify({ batch_input: [{ plaintext: key.toString('base64') }] });
    JSON.parse(`{"data":{"batch_results":[{"plaintext":"${key.toString('base64')}"}]}}`);
  });
  assert.equal(seen.filter((s) => s.includes(key.toString('base64'))).length, 2);
});
