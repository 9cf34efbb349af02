// transitKek against answers a real OpenBao server does not give on demand:
// a redirect, a body that is not JSON, a path with no engine, a server that
// fails and then answers, a batch refused as a whole, a proxy's bare 404, an
// endless answer. Served by a local HTTP server; the suite against a real
// OpenBao is tenant-keys-transit.test.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { createHash, randomBytes } from 'node:crypto';
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
      // A function streams the body itself.
      if (typeof text === 'function') text(res);
      else res.end(text);
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

/** The batch_input of the request being answered. */
const inputOf = () => JSON.parse(seen.at(-1).body).batch_input;
/** A fake key for a wrapped key: 32 bytes, each the length of the ciphertext. */
const keyFor = (ciphertext) => Buffer.alloc(32, ciphertext.length).toString('base64');

test('a batch refused as a whole (HTTP 400 for one bad item) goes again in halves: an unwrap fails only for its own item', async () => {
  const p = kek();
  const aad = new Uint8Array(4);
  const wrapped = ['vault:v1:a', 'vault:v1:bb', 'vault:v1:bad', 'vault:v1:dddd', 'vault:v1:eeeee'];
  const unwrapAll = () => Promise.allSettled(wrapped.map((w, i) => p.unwrap(w, p.id, aad, `tenant-${i}`)));
  const check = (results) => {
    assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    assert.equal(results[2].reason.code, 'ALE_AUTH_FAILED');
    for (const i of [0, 1, 3, 4]) assert.deepEqual(results[i].value, Buffer.from(keyFor(wrapped[i]), 'base64'));
  };
  // an engine (or a proxy) that refuses the whole batch, with no result per item
  answer = () => {
    const items = inputOf();
    if (items.some((i) => i.ciphertext === 'vault:v1:bad')) return [400, JSON.stringify({ errors: ['cipher: message authentication failed'] })];
    return [200, JSON.stringify({ data: { batch_results: items.map((i) => ({ plaintext: keyFor(i.ciphertext) })) } })];
  };
  seen.length = 0;
  check(await unwrapAll());
  assert.equal(JSON.parse(seen[0].body).batch_input.length, wrapped.length, 'one batch first');
  assert.ok(seen.length <= 2 * wrapped.length - 1, `${seen.length} requests: halves, not one request per item and retry`);
  // OpenBao's own answer: HTTP 400 with a result per item, one request
  answer = () => [400, JSON.stringify({ data: { batch_results: inputOf().map((i) => (i.ciphertext === 'vault:v1:bad' ? { plaintext: '', error: 'cipher: message authentication failed' } : { plaintext: keyFor(i.ciphertext) })) } })];
  seen.length = 0;
  check(await unwrapAll());
  assert.equal(seen.length, 1);
});

test('mount and key are names: dot segments and other characters are ALE_INVALID_INPUT when transitKek() is called, before any request', async () => {
  seen.length = 0;
  const perTenant = (prefix) => ({ key: undefined, keyPerTenant: { prefix } });
  for (const extra of [
    { mount: '../v1/sys/mounts' },
    { mount: 'transit/..' },
    { mount: './transit' },
    { mount: '.' },
    { mount: '..' },
    { mount: '...' },
    { mount: 'a//b' },
    { mount: '/transit' },
    { mount: 'transit/' },
    { mount: '' },
    { mount: '%2e%2e' },
    { mount: '.%2e/sys' },
    { mount: 'a\\..\\b' },
    { mount: 'transit?x=1' },
    { mount: 'transit#x' },
    { mount: 'trånsit' },
    { mount: 7 },
    { key: '..' },
    { key: '.' },
    { key: 'a/b' },
    { key: '' },
    { key: '%2e%2e' },
    { key: 'k k' },
    { key: 7 },
    perTenant('..'),
    perTenant('a/'),
    perTenant(''),
    { key: undefined, keyPerTenant: {} },
  ]) {
    assert.throws(() => kek(extra), (e) => e.code === 'ALE_INVALID_INPUT' && /options\.(mount|key)/.test(e.message), JSON.stringify(extra));
  }
  // neither key nor keyPerTenant, or both: the message says which
  assert.throws(() => kek({ key: undefined }), (e) => e.code === 'ALE_INVALID_INPUT' && /neither was given/.test(e.message));
  assert.throws(() => kek({ keyPerTenant: { prefix: 't' } }), (e) => e.code === 'ALE_INVALID_INPUT' && /not both/.test(e.message));
  assert.equal(seen.length, 0, 'no request was made');
  // names with dots inside, and nested mounts, are names
  answer = () => [200, JSON.stringify({ data: { batch_results: [{ ciphertext: 'vault:v1:abc' }] } })];
  const r = await attempt(kek({ mount: 'team-a/transit_2.eu', key: '.k..v2' }));
  assert.deepEqual(r, { ok: 'vault:v1:abc' });
  assert.equal(seen[0].url, '/v1/team-a/transit_2.eu/encrypt/.k..v2');
  // a key per tenant: whatever the tenant id, its key name is one name under the mount
  for (const tenant of ['../../sys/mounts', '..', '.', 'a/b', '%2e%2e', '?x#y']) {
    const p = kek(perTenant('t.'));
    seen.length = 0;
    await p.wrap(new Uint8Array(32), new Uint8Array(4), tenant);
    assert.equal(seen[0].url, `/v1/transit/encrypt/t.${createHash('sha256').update(tenant).digest('base64url')}`, tenant);
  }
});

test("destroy resolves only on the engine's word that the key is gone: a bare 404 (a proxy) is ALE_KEK_UNAVAILABLE, and nothing is deleted", async () => {
  const p = kek({ key: undefined, keyPerTenant: { prefix: 'p-' } });
  for (const body of ['', 'Not Found', '<html><body>404 Not Found</body></html>', JSON.stringify({ message: 'not found' }), JSON.stringify({ errors: 'none' })]) {
    answer = () => [404, body, { 'content-type': 'text/html' }];
    const r = await attempt(p, (q) => q.destroy('acme'));
    assert.equal(r.code, 'ALE_KEK_UNAVAILABLE', body);
    assert.match(r.message, /HTTP 404/);
    assert.deepEqual(seen.map((s) => s.method), ['POST'], 'no DELETE follows');
  }
  // OpenBao's answers: the key exists (config, then delete), or it is gone already (a 400 that says so)
  answer = (req) => (req.method === 'DELETE' ? [204, ''] : [200, JSON.stringify({ data: { deletion_allowed: true, latest_version: 1 } })]);
  assert.deepEqual(await attempt(p, (q) => q.destroy('acme')), { ok: undefined });
  const name = `p-${createHash('sha256').update('acme').digest('base64url')}`;
  assert.deepEqual(seen.map((s) => `${s.method} ${s.url}`), [`POST /v1/transit/keys/${name}/config`, `DELETE /v1/transit/keys/${name}`]);
  assert.deepEqual(JSON.parse(seen[0].body), { deletion_allowed: true });
  answer = () => [400, JSON.stringify({ errors: [`no existing key named ${name} could be found`] })];
  assert.deepEqual(await attempt(p, (q) => q.destroy('acme')), { ok: undefined });
  assert.equal(seen.length, 1);
});

test('an answer past 512 KiB is dropped unread: the request is aborted at once, and ALE_KEK_UNAVAILABLE names the cap and nothing of the body', async () => {
  const marker = 'SECRETBODY';
  // valid JSON, whole, just too large
  const big = JSON.stringify({ data: { batch_results: [{ ciphertext: 'vault:v1:abc' }] }, pad: marker.repeat(60_000) });
  for (const headers of [{}, { 'transfer-encoding': 'chunked' }]) {
    answer = () => [200, big, headers];
    const r = await attempt(kek());
    assert.equal(r.code, 'ALE_KEK_UNAVAILABLE');
    assert.match(r.message, /more than 512 KiB/);
    assert.ok(!r.message.includes(marker));
    assert.equal(seen.length, 1, 'not retried');
  }
  // an endless answer: refused long before the timeout, and the connection is closed
  let closed;
  const ended = new Promise((resolve) => (closed = resolve));
  answer = () => [
    200,
    (res) => {
      const chunk = Buffer.from(`{"data":{"pad":"${marker.repeat(6_500)}`);
      const more = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', more);
      };
      res.on('close', closed);
      res.write('{"data":{"batch_results":[');
      more();
    },
  ];
  const started = Date.now();
  const r = await attempt(kek({ timeoutMs: 20_000 }));
  const took = Date.now() - started;
  assert.equal(r.code, 'ALE_KEK_UNAVAILABLE');
  assert.match(r.message, /more than 512 KiB/);
  assert.ok(!r.message.includes(marker));
  assert.ok(took < 10_000, `failed after ${took} ms, with a timeout of 20,000`);
  await ended;
});

test('keys travel as standard base64 both ways, written into and read out of the bytes of requests and answers', async () => {
  // the fake engine: the ciphertext carries the plaintext it was given
  answer = (req) => {
    const items = inputOf();
    const encrypt = req.url.includes('/encrypt/');
    return [200, JSON.stringify({ data: { batch_results: items.map((i) => (encrypt ? { ciphertext: `vault:v1:${i.plaintext}`, key_version: 1 } : { plaintext: i.ciphertext.slice('vault:v1:'.length) })) } })];
  };
  const p = kek();
  const aad = new Uint8Array(4);
  const keys = [new Uint8Array(32), new Uint8Array(32).fill(255), ...Array.from({ length: 34 }, (_, n) => randomBytes(n + 1))];
  seen.length = 0;
  const wrapped = await Promise.all(keys.map((k) => p.wrap(k, aad, 'acme')));
  assert.deepEqual(JSON.parse(seen[0].body).batch_input.map((i) => i.plaintext), keys.map((k) => Buffer.from(k).toString('base64')));
  const opened = await Promise.all(wrapped.map((w) => p.unwrap(w, p.id, aad, 'acme')));
  opened.forEach((o, i) => assert.deepEqual(o, Buffer.from(keys[i])));
  assert.equal(seen.length, 2, 'one request each way');
  // what the caller passed is its own: not wiped, not kept
  assert.ok(keys[1].every((b) => b === 255));
  // a plaintext that is not padded standard base64 does not unwrap
  for (const bad of ['abc', 'ab$=', 'a===', '====', 'AAAA\\u0041AAA']) {
    answer = () => [200, `{"data":{"batch_results":[{"plaintext":"${bad}"}]}}`];
    assert.equal((await attempt(p, (q) => q.unwrap('vault:v1:x', q.id, aad, 'acme'))).code, 'ALE_AUTH_FAILED', bad);
  }
});
