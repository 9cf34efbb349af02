#!/usr/bin/env node
// ale-check: before switching SveltyCMS to @sveltycms/ale, open a sample of
// the values the CMS stored and count which key opens each one. Nothing is
// written, and no value is printed.
//
//   ale-check [--sample N] [values.jsonl]     (standard input without a file)
//
// Each input line is a JSON object {"value", "tenantId", "collectionId",
// "fieldName"}, exported from the database by its own tools. The keys come
// from ENCRYPTION_KEY (or SECRET_ENCRYPTION_KEY), ENCRYPTION_KEY_PREVIOUS and
// ENCRYPTION_KEY_PREVIOUS_<n>, as the drop-in reads them. Exit status: 0 when every envelope opened, 1 when
// some did not, 2 on bad usage or input.
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';

const { checkStoredValues } = createRequire(import.meta.url)('../dist/cjs/sveltycms/index.js');

function fail(message) {
  console.error(`ale-check: ${message}`);
  process.exit(2);
}

let args;
try {
  args = parseArgs({ allowPositionals: true, options: { sample: { type: 'string' }, help: { type: 'boolean' } } });
} catch (e) {
  fail(e.message);
}
if (args.values.help) {
  console.log('usage: ale-check [--sample N] [values.jsonl]   (JSON lines: {"value","tenantId","collectionId","fieldName"})');
  process.exit(0);
}
const sample = args.values.sample === undefined ? Infinity : Number(args.values.sample);
if (!(sample > 0)) fail('--sample must be a positive number');

const input = args.positionals[0] ? createReadStream(args.positionals[0]) : process.stdin;
const values = [];
let line = 0;
try {
  for await (const text of createInterface({ input, crlfDelay: Infinity })) {
    line++;
    if (text.trim() === '') continue;
    if (values.length >= sample) break;
    let row;
    try {
      row = JSON.parse(text);
    } catch {
      fail(`line ${line} is not JSON`);
    }
    // A line without "value" (a misspelt column alias) would count as plaintext and pass the gate; null is a value.
    if (row === null || typeof row !== 'object' || !('value' in row)) fail(`line ${line} has no "value"`);
    for (const name of ['tenantId', 'collectionId', 'fieldName']) {
      if (typeof row[name] !== 'string') fail(`line ${line}: "${name}" must be a string`);
    }
    values.push(row);
  }
} catch (e) {
  // the file cannot be read (missing, a directory): bad input, not values that did not open
  fail(`${args.positionals[0] ?? 'standard input'} cannot be read (${e?.code ?? e?.message})`);
}
// An empty export (a query that matched no rows) checked nothing: it must not pass the gate.
if (values.length === 0) fail('no values to check: the input has no lines');

let report;
try {
  report = checkStoredValues(values);
} catch (e) {
  fail(`${e.code ?? 'error'}: ${e.message}`);
}
const failed = Object.values(report.failed).reduce((a, b) => a + b, 0);
console.log(`checked ${report.total} values:`);
console.log(`  ${report.primary} opened by the primary key (ENCRYPTION_KEY)`);
console.log(`  ${report.previous} opened by a previous key (ENCRYPTION_KEY_PREVIOUS): re-encrypt them`);
console.log(`  ${report.legacy} opened by a passphrase's legacy key: re-encrypt them`);
console.log(`  ${report.plaintext} legacy plaintext (not encrypted)`);
console.log(`  ${failed} did not open${failed ? `: ${Object.entries(report.failed).map(([code, n]) => `${code} × ${n}`).join(', ')}` : ''}`);
if (report.envelopeLike) console.log(`  of which ${report.envelopeLike} look like envelopes to SveltyCMS but are not: damaged envelopes, or text it stored unencrypted; both read as null, as in SveltyCMS`);
for (const k of report.byKey) console.log(`  key ${k.index} (secret #${k.secret}, ${k.kind}): ${k.opened}`);
process.exit(failed ? 1 : 0);
