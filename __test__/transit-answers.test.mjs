// transitKek against answers a real OpenBao server does not give on demand:
// a redirect, a body that is not JSON, a path with no engine, a server that
// fails and then answers. Served by a local HTTP server; the suite against a
// real OpenBao is tenant-keys-transit.test.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { randomBytes } from 'node:crypto';
import * as mod from '@sveltycms/ale/drizzle/sqlite';

let server;
let address;
let answer = () => [500, ''];
const seen = [];
before(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, token: req.headers['x-vault-token'], body });
      const [status, text, headers = {}] = answer(req, seen.length);
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(text);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  address = `http://127.0.0.1:${server.address().port}`;
});
after(() => new Promise((resolve) => server.close(resolve)));

const token = `t-${randomBytes(8).toString('hex')}`;
const kek = (extra = {}) => mod.transitKek({ address, token, key: 'k', timeoutMs: 300, retries: 1, ...extra });
const attempt = async (provider, op = (p) => p.wrap(new Uint8Array(32), new Uint8Array(4), 'acme')) => {
  seen.length = 0;
  try {
    return { ok: await op(provider) };
  } catch (e) {
    assert.ok(!e.message.includes(token) && !String(e.stack).includes(token), 'no token in the error');
    return { code: e.code, message: e.message };
  }
};

test('a redirect is not followed (the token would go with it): ALE_KEK_UNAVAILABLE at once', async () => {
  answer = () => [307, '', { location: 'http://127.0.0.2:1/v1/transit/encrypt/k' }];
  const r = await attempt(kek());
  assert.equal(r.code, 'ALE_KEK_UNAVAILABLE');
  assert.match(r.message, /redirect \(HTTP 307\)/);
  assert.equal(seen.length, 1);
});

test('a body that is not JSON is retried, then ALE_KEK_UNAVAILABLE; a good answer on the retry is used', async () => {
  answer = () => [200, '<html>proxy</html>'];
  const r = await attempt(kek());
  assert.equal(r.code, 'ALE_KEK_UNAVAILABLE');
  assert.match(r.message, /other than JSON \(2 attempts\)/);
  assert.equal(seen.length, 2);
  answer = (req, n) => (n === 1 ? [503, ''] : [200, JSON.stringify({ data: { batch_results: [{ ciphertext: 'vault:v1:abc' }] } })]);
  assert.deepEqual(await attempt(kek()), { ok: 'vault:v1:abc' });
  assert.equal(seen.length, 2);
  assert.equal(seen[1].token, token, 'the token travels in X-Vault-Token');
  assert.deepEqual(Object.keys(JSON.parse(seen[1].body).batch_input[0]).sort(), ['associated_data', 'plaintext']);
});

test('a path with no engine behind it (a wrong mount) is ALE_KEK_UNAVAILABLE, not a missing key', async () => {
  answer = () => [404, JSON.stringify({ errors: ['no handler for route "nowhere/keys/x". route entry not found.'] })];
  const perTenant = kek({ key: undefined, keyPerTenant: { prefix: 'p-' }, mount: 'nowhere' });
  const r = await attempt(perTenant, (p) => p.destroy('acme'));
  assert.equal(r.code, 'ALE_KEK_UNAVAILABLE');
  assert.match(r.message, /no such path \(HTTP 404\)/);
  // a key that is really gone: destroy is done, an unwrap does not open
  answer = () => [404, JSON.stringify({ errors: [] })];
  assert.deepEqual(await attempt(perTenant, (p) => p.destroy('acme')), { ok: undefined });
  answer = () => [400, JSON.stringify({ errors: ['encryption key not found'] })];
  assert.equal((await attempt(perTenant, (p) => p.unwrap('vault:v1:x', p.id, new Uint8Array(4), 'acme'))).code, 'ALE_AUTH_FAILED');
});

test('a refused token fails at once, naming the status and not the token', async () => {
  answer = () => [403, JSON.stringify({ errors: ['permission denied'] })];
  const r = await attempt(kek());
  assert.equal(r.code, 'ALE_KEK_UNAVAILABLE');
  assert.match(r.message, /HTTP 403/);
  assert.equal(seen.length, 1);
});

test('unwraps asked for together go out as one batch request; each gets its own result or its own failure', async () => {
  answer = (req) => {
    const items = JSON.parse(seen.at(-1).body).batch_input;
    return [200, JSON.stringify({ data: { batch_results: items.map((i) => (i.ciphertext === 'vault:v1:bad' ? { error: 'cipher: message authentication failed' } : { plaintext: Buffer.alloc(32, i.ciphertext.length).toString('base64') })) } })];
  };
  const p = kek();
  seen.length = 0;
  const aad = new Uint8Array(4);
  const results = await Promise.allSettled([p.unwrap('vault:v1:a', p.id, aad, 'acme'), p.unwrap('vault:v1:bad', p.id, aad, 'acme'), p.unwrap('vault:v1:abc', p.id, aad, 'acme')]);
  assert.equal(seen.length, 1, 'one request');
  assert.equal(JSON.parse(seen[0].body).batch_input.length, 3);
  assert.equal(results[0].value.length, 32);
  assert.equal(results[1].reason.code, 'ALE_AUTH_FAILED');
  assert.equal(results[2].value[0], 'vault:v1:abc'.length);
  // asked for in separate turns: separate requests
  seen.length = 0;
  await p.unwrap('vault:v1:a', p.id, aad, 'acme');
  await p.unwrap('vault:v1:a', p.id, aad, 'acme');
  assert.equal(seen.length, 2);
});
