// Every error the package builds is coded, by one helper, with a code the
// README documents. Read from the sources (ts/ and the addon's Rust error
// map) rather than provoked one by one: a new throw site with a hand-built
// error, or a code nobody documented, fails here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function sources(dir, ext) {
  return readdirSync(join(root, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(ext))
    .map((e) => join(e.parentPath ?? e.path, e.name));
}
const ts = sources('ts', '.ts');
const documented = new Set([...readFileSync(join(root, 'README.md'), 'utf8').matchAll(/^\| `(ALE_[A-Z0-9_]+)` \|/gm)].map((m) => m[1]));

test('errors: no source in ts/ builds an error by hand; ts/shared/errors.ts is the one place, and AleColumnError (ts/drizzle/errors.ts) the one class', () => {
  assert.ok(ts.length > 30, `ts/ sources: ${ts.length}`);
  const handBuilt = [];
  for (const file of ts) {
    const rel = relative(root, file);
    if (rel === join('ts', 'shared', 'errors.ts')) continue;
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (/^\s*(\/\/|\*)/.test(line)) return;
        if (/new (Type|Range|Syntax)?Error\(|Object\.assign\(new /.test(line)) handBuilt.push(`${rel}:${i + 1}: ${line.trim()}`);
      });
  }
  assert.deepEqual(handBuilt, []);
});

test('errors: every code the sources use (ts/ and the addon\'s error map) is in the README\'s table', () => {
  const used = new Map();
  const note = (code, where) => used.set(code, [...(used.get(code) ?? []), where]);
  for (const file of ts) for (const m of readFileSync(file, 'utf8').matchAll(/codedError\(\s*'(ALE_[A-Z0-9_]+)'/g)) note(m[1], relative(root, file));
  // the addon's codes: the core's error enum and the binding's one map, and the warnings the binding queues
  const rust = ['crates/core/src/error.rs', 'src/error.rs', 'src/budget.rs', 'src/secrets.rs'].map((f) => join(root, f));
  for (const file of rust) for (const m of readFileSync(file, 'utf8').matchAll(/"(ALE_[A-Z0-9_]+)"/g)) note(m[1], relative(root, file));
  assert.ok(used.size >= 12, `codes found: ${[...used.keys()]}`);
  // process warnings carry codes too; the README lists them apart
  const warnings = new Set(['ALE_IV_BUDGET', 'ALE_LEGACY_PLAINTEXT', 'ALE_KEY_NEAR_MISS', 'ALE_NATIVE_UNAVAILABLE']);
  const undocumented = [...used].filter(([code]) => !documented.has(code) && !warnings.has(code)).map(([code, where]) => `${code} (${[...new Set(where)].join(', ')})`);
  assert.deepEqual(undocumented, []);
});

test('errors: the throw sites of ts/ throw a coded error, a factory of one, or what they caught', () => {
  // file → name → the text of its definition (a function, or a const arrow): from its line to the
  // next statement at its indentation or less, so that a definition ends where its body does
  const definitions = new Map();
  const indent = (line) => line.length - line.trimStart().length;
  for (const file of ts) {
    const lines = readFileSync(file, 'utf8').split('\n');
    const own = new Map();
    lines.forEach((line, i) => {
      const m = /(?:function\s+(\w+)\s*\(|(?:const|let)\s+(\w+)\s*=\s*(?:\([^)]*\)|\w+)\s*(?::\s*[\w<>|\s]+)?\s*=>)/.exec(line);
      if (!m) return;
      let end = i + 1;
      while (end < lines.length && (lines[end].trim() === '' || indent(lines[end]) > indent(line) || /^\s*[})\]]/.test(lines[end]))) end++;
      own.set(m[1] ?? m[2], lines.slice(i, end).join('\n'));
    });
    definitions.set(file, own);
  }
  // a factory returns codedError(...) or new AleColumnError(...), itself or through another factory;
  // a name is looked up in its own file first, else it must be a factory in every file that defines it
  const factory = new Map();
  const bodiesOf = (name, file) => {
    const here = definitions.get(file)?.get(name);
    if (here !== undefined) return [[file, here]];
    return [...definitions].flatMap(([f, own]) => (own.has(name) ? [[f, own.get(name)]] : []));
  };
  const isFactory = (name, file, seen = new Set()) => {
    const key = `${file}:${name}`;
    if (factory.has(key)) return factory.get(key);
    if (seen.has(key)) return false;
    seen.add(key);
    const bodies = bodiesOf(name, file);
    const result =
      bodies.length > 0 &&
      bodies.every(([f, body]) => /codedError\(|new AleColumnError\(/.test(body) || [...body.matchAll(/(?:return|=>|throw)\s+(\w+)\(/g)].some((c) => c[1] !== name && isFactory(c[1], f, seen)));
    factory.set(key, result);
    return result;
  };
  const caught = /^(e|err|error|cause|reason|failure|\(failed as PromiseRejectedResult\)\.reason)$/;
  // a const that names one factory or another (`const parts = keyId ? fiveParts : fourParts`)
  for (const file of ts) {
    for (const m of readFileSync(file, 'utf8').matchAll(/const (\w+) = [^;?]+\?\s*(\w+)\s*:\s*(\w+);/g)) {
      if (isFactory(m[2], file) && isFactory(m[3], file)) factory.set(`${file}:${m[1]}`, true);
    }
  }
  const coded = (what, file) => {
    // string literals say nothing of what is thrown, and their ':' and '?' would read as a ternary's
    what = what.trim().replace(/'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|`(?:[^`\\]|\\.)*`/g, "''");
    if (caught.test(what) || /^(codedError|new AleColumnError|Object\.assign\(codedError)\(/.test(what)) return true;
    const ternary = /^[^?]+\?\s*(.+?)\s*:\s*(.+)$/.exec(what);
    if (ternary) return coded(ternary[1], file) && coded(ternary[2], file);
    const callee = /^([\w.#]+)\(/.exec(what)?.[1]?.split('.').pop();
    return callee !== undefined && (isFactory(callee, file) || factory.get(`${file}:${callee}`) === true);
  };
  const unknown = [];
  for (const file of ts) {
    const rel = relative(root, file);
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (/^\s*(\/\/|\*|\/\*)/.test(line)) return;
        const m = /\bthrow\s+(.+?);?\s*$/.exec(line);
        if (m && !coded(m[1], file)) unknown.push(`${rel}:${i + 1}: throw ${m[1]}`);
      });
  }
  assert.deepEqual(unknown, []);
});
