// Hooks a process can replace, and what they may not break: a
// markAsUntransferable that throws when a Buffer pool is made, and a
// process.emitWarning that throws or encrypts again when the IV-budget
// warning fires. Each case runs in a child process of this runtime, since
// it patches process-wide functions before the package loads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ale, CTX, SECRET } from './helpers.mjs';

const MAIN = fileURLToPath(new URL('../main.cjs', import.meta.url));

/** Runs `code` (CommonJS) in a child of this runtime; returns its stdout lines and status. */
function child(code) {
  const r = spawnSync(process.execPath, ['-e', code], { encoding: 'utf8', timeout: 60_000, env: process.env });
  return { lines: r.stdout.trim().split('\n'), status: r.status, stderr: r.stderr };
}

const PRELUDE = `const SECRET = ${JSON.stringify(SECRET)}; const CTX = ${JSON.stringify(CTX)};`;

test('a pool whose marking fails is never used: every later Buffer is untransferable and opens', { skip: ale.backend !== 'native' && 'the fallback uses the engine\'s own Buffer pool' }, () => {
  const { lines, status, stderr } = child(`${PRELUDE}
const wt = require('node:worker_threads');
const mark = wt.markAsUntransferable;
let calls = 0;
wt.markAsUntransferable = function (buffer) {
  if (++calls === 1) throw new Error('marking failed once');
  return mark.call(this, buffer);
};
const ring = new (require(${JSON.stringify(MAIN)}).KeyRing)([SECRET]);
let first = 'no error';
try { ring.encryptBinary('first', ...CTX); } catch (e) { first = e.message; }
const made = Array.from({ length: 300 }, (_, i) => ring.encryptBinary('value ' + i, ...CTX));
let transferred = 0;
for (const b of made) {
  try { structuredClone(b.buffer, { transfer: [b.buffer] }); transferred++; } catch {}
}
const opened = made.filter((b, i) => { try { return ring.decryptBinary(b, ...CTX) === 'value ' + i; } catch { return false; } }).length;
console.log(JSON.stringify({ first, marked: calls > 1, transferred, opened }));`);
  assert.equal(status, 0, stderr);
  const got = JSON.parse(lines.at(-1));
  assert.deepEqual(got, { first: 'marking failed once', marked: true, transferred: 0, opened: 300 });
});

test('an emitWarning that throws loses no envelope: the warning comes after the call', () => {
  const { lines, status, stderr } = child(`${PRELUDE}
const { KeyRing } = require(${JSON.stringify(MAIN)});
process.on('uncaughtException', (e) => console.log('later: ' + e.message));
process.emitWarning = () => { throw new Error('emitWarning threw'); };
const ring = new KeyRing([SECRET]);
ring.setIvBudgetWarning(2);
const sealed = [ring.encrypt('a', ...CTX), ring.encrypt('b', ...CTX), ring.encryptBinary('c', ...CTX)];
console.log('sealed ' + [ring.decrypt(sealed[0], ...CTX), ring.decrypt(sealed[1], ...CTX), ring.decryptBinary(sealed[2], ...CTX)].join(''));
setTimeout(() => {}, 100);`);
  assert.equal(status, 0, stderr);
  assert.deepEqual(lines, ['sealed abc', 'later: emitWarning threw']);
});

test('an emitWarning that encrypts again does not re-enter the call that warned', () => {
  const { lines, status, stderr } = child(`${PRELUDE}
const { KeyRing } = require(${JSON.stringify(MAIN)});
const ring = new KeyRing([SECRET]);
const emit = process.emitWarning;
process.emitWarning = function (message, ...rest) {
  const inner = ring.encrypt('from the hook', ...CTX);
  console.log('hook ' + ring.decrypt(inner, ...CTX));
  return emit.call(this, message, ...rest);
};
process.on('warning', (w) => console.log('warning ' + w.code));
ring.setIvBudgetWarning(1);
const outer = ring.encrypt('outer', ...CTX);
console.log('outer ' + ring.decrypt(outer, ...CTX));
setTimeout(() => {}, 100);`);
  assert.equal(status, 0, stderr);
  assert.deepEqual(lines, ['outer outer', 'hook from the hook', 'warning ALE_IV_BUDGET']);
});
