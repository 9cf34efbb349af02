// The callgrind reader behind `npm run bench:footprint` and
// `scripts/hot-symbols.mjs` (bench/callgrind.mjs), on part files written
// here in callgrind's format: which interval a part closes, its totals with
// trailing zeros left out, and each address's own cost, with compressed
// object names, relative addresses and a call's inclusive cost line, which
// must neither count nor move the base the next line is relative to.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { costByAddress, endingAt, readParts } from '../bench/callgrind.mjs';

const EVENTS = 'Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw';

function part(n, trigger, body, totals, events = EVENTS) {
  return [
    '# callgrind format',
    'version: 1',
    'creator: callgrind-3.19.0',
    'pid: 4242',
    'cmd: node probe.mjs',
    `part: ${n}`,
    '',
    'desc: I1 cache: 1024 B, 64 B, 2-way associative',
    `desc: Trigger: ${trigger}`,
    '',
    'positions: instr line',
    `events: ${events}`,
    '',
    ...body,
    '',
    `totals: ${totals}`,
    '',
  ].join('\n');
}

function withParts(files, check) {
  const dir = mkdtempSync(join(tmpdir(), 'ale-callgrind-'));
  try {
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    return check(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const ADDON = '/x/ale.linux-x64-gnu.node';
const BODY = [
  `ob=(1) ${ADDON}`,
  'fl=(1) ???',
  'fn=(1) 0x0000000000001000',
  '0x1000 0 10',
  '+4 0 5',
  // a call into another object: its inclusive cost, relative to 0x1004 without moving it
  'cob=(2) /x/node',
  'cfi=(1)',
  'cfn=(2) napi_create_string_latin1',
  'calls=1 0x2000 0',
  '+2 0 100',
  '-2 0 7',
  '* 0 3',
  'ob=(2)',
  'fn=(2)',
  '0x2000 0 50',
  'ob=(1)',
  'fn=(3) 0x0000000000001100',
  '0x1100 0 1',
];

describe('bench/callgrind.mjs reads callgrind part files', () => {
  test('parts in dump order, each with the marker it was dumped before, its totals and its last-level misses', () =>
    withParts(
      {
        'cg.out.2': part(2, '--dump-before=getgid', BODY, '76 3 1 2 1 0 4 5'),
        'cg.out.1': part(1, '--dump-before=getegid', ['ob=(1) /x/a', 'fn=(1) f', '0x10 0 9'], '9 1 1 1 1 1 1 1 1'),
        'cg.out.3': part(3, 'Program termination', ['ob=(1) /x/a', 'fn=(1) f', '0x10 0 1'], '1'),
        'other.1': 'not a part of this run',
      },
      (dir) => {
        const parts = readParts(dir, 'cg.out');
        assert.deepEqual(
          parts.map((p) => [p.part, p.when, p.at]),
          [
            [1, 'before', 'getegid'],
            [2, 'before', 'getgid'],
            [3, 'other', ''],
          ],
        );
        // DLmw left out of part 2's totals: a zero, not a missing event
        assert.deepEqual(parts[1].counts, { Ir: 76, Dr: 3, Dw: 1, I1mr: 2, D1mr: 1, D1mw: 0, ILmr: 4, DLmr: 5, DLmw: 0, LLm: 9 });
        assert.equal(parts[2].counts.LLm, 0);
        assert.deepEqual(
          endingAt(parts, 'getgid').map((p) => p.part),
          [2],
        );
      },
    ));

  test("each address's own cost, for one object only", () =>
    withParts({ 'cg.out.1': part(1, '--dump-before=getgid', BODY, '76') }, (dir) => {
      const [p] = readParts(dir, 'cg.out');
      const costs = costByAddress(p, ADDON);
      assert.deepEqual(
        [...costs].sort(([a], [b]) => a - b),
        [
          [0x1000, 10],
          [0x1002, 10],
          [0x1004, 5],
          [0x1100, 1],
        ],
      );
      assert.deepEqual([...costByAddress(p, '/x/node')], [[0x2000, 50]]);
    }));

  test('a file that is not a part, or counts other events, is refused', () =>
    withParts(
      {
        'cg.out.1': 'hello\n',
        'ir.out.1': part(1, '--dump-before=getgid', [], '5', 'Ir'),
      },
      (dir) => {
        assert.throws(() => readParts(dir, 'cg.out'), /not a callgrind part file/);
        // a run without --cache-sim read as one with it
        assert.throws(() => readParts(dir, 'ir.out'), /counts Ir, not Ir Dr/);
        assert.deepEqual(readParts(dir, 'ir.out', { cacheSim: false })[0].counts, { Ir: 5 });
      },
    ));
});
