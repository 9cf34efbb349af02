// The test command (`npm test`): every suite, on every runtime, with counts.
// Fails when any suite fails or when a runner reports zero tests, so a glob
// that matches nothing can never pass.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const bin = join(root, 'node_modules', '.bin');
const jsTests = readdirSync(join(root, '__test__'))
  .filter((f) => /\.test\.(mjs|cjs)$/.test(f))
  .map((f) => join('__test__', f));

const suites = [
  {
    name: 'cargo test (core, AWS-LC + RustCrypto backends)',
    cmd: 'cargo',
    args: ['test', '--workspace', '--features', 'rustcrypto'],
    count: (out) => sumAll(out, /test result: \w+\. (\d+) passed; (\d+) failed/g),
  },
  {
    name: `JS suite on Node ${run(join(bin, 'node'), ['--version']).trim()}`,
    cmd: join(bin, 'node'),
    args: ['--test', '--test-reporter=spec', ...jsTests],
    count: (out) => last(out, /ℹ pass (\d+)[\s\S]*?ℹ fail (\d+)/g),
  },
  {
    name: `JS suite on Bun ${run(join(bin, 'bun'), ['--version']).trim()}`,
    cmd: join(bin, 'bun'),
    args: ['test', ...jsTests.map((f) => `./${f}`)],
    count: (out) => ({ pass: lastNumber(out, /^\s*(\d+) pass$/gm), fail: lastNumber(out, /^\s*(\d+) fail$/gm) }),
  },
  {
    name: 'TypeScript: type tests and the Drizzle layer (tsc)',
    cmd: join(bin, 'tsc'),
    args: ['-p', 'tsconfig.typetest.json'],
    // tsc prints nothing on success; each Expect<> and @ts-expect-error is an assertion.
    count: (out, status) => {
      const text = readFileSync(join(root, '__test__', 'types.test-d.mts'), 'utf8');
      const assertions = (text.match(/Expect<Equal</g) ?? []).length + (text.match(/@ts-expect-error/g) ?? []).length;
      const errors = (out.match(/error TS\d+/g) ?? []).length;
      return status === 0 ? { pass: assertions, fail: 0 } : { pass: 0, fail: Math.max(errors, 1) };
    },
  },
  {
    name: 'install from packed tarballs (Node 24 and Bun)',
    cmd: join(bin, 'node'),
    args: ['--test', '--test-reporter=spec', '__test__/install.check.mjs'],
    count: (out) => last(out, /ℹ pass (\d+)[\s\S]*?ℹ fail (\d+)/g),
  },
];

function run(cmd, args) {
  return spawnSync(cmd, args, { cwd: root, encoding: 'utf8' }).stdout ?? '';
}
function sumAll(out, re) {
  let pass = 0;
  let fail = 0;
  for (const m of out.matchAll(re)) {
    pass += Number(m[1]);
    fail += Number(m[2]);
  }
  return { pass, fail };
}
function lastNumber(out, re) {
  const m = [...out.matchAll(re)].at(-1);
  return m ? Number(m[1]) : 0;
}
function last(out, re) {
  const all = [...out.matchAll(re)];
  const m = all.at(-1);
  return m ? { pass: Number(m[1]), fail: Number(m[2]) } : { pass: 0, fail: 0 };
}

const summary = [];
let failed = false;
for (const suite of suites) {
  console.log(`\n=== ${suite.name}`);
  const r = spawnSync(suite.cmd, suite.args, { cwd: root, encoding: 'utf8', env: process.env, maxBuffer: 256 << 20 });
  const out = `${r.stdout ?? ''}\n${r.stderr ?? ''}`;
  process.stdout.write(r.stdout ?? '');
  process.stderr.write(r.stderr ?? '');
  const { pass, fail } = suite.count(out, r.status);
  const ok = r.status === 0 && fail === 0 && pass > 0;
  if (pass === 0) console.error(`!!! ${suite.name}: the runner found no tests`);
  if (!ok) failed = true;
  summary.push({ suite: suite.name, pass, fail, exit: r.status, ok });
}

console.log('\n=== summary');
for (const s of summary) console.log(`${s.ok ? 'ok  ' : 'FAIL'} ${s.suite}: ${s.pass} passed, ${s.fail} failed (exit ${s.exit})`);
const pass = summary.reduce((a, s) => a + s.pass, 0);
const fail = summary.reduce((a, s) => a + s.fail, 0) + summary.filter((s) => !s.ok && s.fail === 0).length;
console.log(`${pass} passed, ${fail} failed`);
process.exit(failed ? 1 : 0);
