// The test command (`npm test`): every suite, on every runtime, with counts.
// Fails when any suite fails or when a runner reports zero tests, so a glob
// that matches nothing can never pass. The suites that take their drivers
// from oracleDrivers (the two oracle suites, range-changing,
// range-narrowed-pg and range-token-table) run on every dialect and driver
// in the native runs, and on SQLite through SveltyCMS's driver alone in
// the node:crypto runs (range-narrowed-pg, PostgreSQL's alone, then has
// no test there); the two oracle suites not on Bun's Node-API path (why:
// at each run below); --full runs them everywhere. The .check.mjs suites
// run as listed below (most on Node 24 alone, their names say so).
//   node scripts/test.mjs --only TypeScript   # the suites whose name contains the text
//   node scripts/test.mjs --full              # the oracle suites in every run, on every driver
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const bin = join(root, 'node_modules', '.bin');
const jsTests = readdirSync(join(root, '__test__'))
  .filter((f) => /\.test\.(mjs|cjs)$/.test(f))
  .map((f) => join('__test__', f));

/** The suites that check every query against a plaintext oracle on each dialect and driver: the longest. */
const ORACLE_SUITES = ['range-drizzle.test.mjs', 'search-drizzle.test.mjs'].map((f) => join('__test__', f));
for (const f of ORACLE_SUITES) if (!jsTests.includes(f)) throw new Error(`${f} is not among the suites`);
const { values: options } = parseArgs({ options: { only: { type: 'string' }, full: { type: 'boolean' } } });
/** The node:crypto runs' drivers for the oracle suites (__test__/fixtures/dialects.mjs). */
const fallbackDrivers = options.full ? 'all' : 'sqlite';

process.env.ALE_TEST_PANIC_ADDON = join(root, 'target', 'test-panic', 'ale.test-panic.node');

// bun test stops a test after 5 s; node --test has no limit. Tests that
// spawn processes or loop a million times can pass 5 s on Bun's JS backend
// on a busy host, so every Bun run gets the same generous limit and both
// runtimes judge the same tests the same way.
const bunTest = ['test', '--timeout', '120000'];

const suites = [
  {
    name: 'cargo test (the core on both backends, and the addon crate)',
    cmd: 'cargo',
    args: ['test', '--workspace', '--features', 'rustcrypto'],
    count: (out) => sumAll(out, /test result: \w+\. (\d+) passed; (\d+) failed/g),
  },
  {
    name: `JS suite on Node ${run(join(bin, 'node'), ['--version']).trim()}`,
    cmd: join(bin, 'node'),
    args: ['--test', '--test-reporter=spec', ...jsTests],
    env: { ALE_BACKEND: 'native' }, // never a silent fallback
    count: (out) => last(out, /ℹ pass (\d+)[\s\S]*?ℹ fail (\d+)/g),
  },
  {
    name: `JS suite on Bun ${run(join(bin, 'bun'), ['--version']).trim()}`,
    cmd: join(bin, 'bun'),
    args: [...bunTest, ...jsTests.map((f) => `./${f}`)],
    env: { ALE_BACKEND: 'native' },
    count: (out) => ({ pass: lastNumber(out, /^\s*(\d+) pass$/gm), fail: lastNumber(out, /^\s*(\d+) fail$/gm) }),
  },
  // The same suites on Bun's Node-API path, which ALE_BUN_PATH=napi keeps
  // (the run above takes the default, bun:ffi), but for the two oracle
  // suites: their 10,000 rows and 1,000 queries per dialect and driver test
  // the SQL the package builds and what each database answers, which the
  // path does not change; the calls they make (range and search tokens,
  // columns) are each tested on this path by the other suites (range,
  // search, drizzle-*). They were the longest part of this run.
  {
    name: `JS suite on Bun ${run(join(bin, 'bun'), ['--version']).trim()}, ALE_BUN_PATH=napi${options.full ? '' : ' (all but the oracle suites)'}`,
    cmd: join(bin, 'bun'),
    args: [...bunTest, ...jsTests.filter((f) => options.full || !ORACLE_SUITES.includes(f)).map((f) => `./${f}`)],
    env: { ALE_BACKEND: 'native', ALE_BUN_PATH: 'napi' },
    count: (out) => ({ pass: lastNumber(out, /^\s*(\d+) pass$/gm), fail: lastNumber(out, /^\s*(\d+) fail$/gm) }),
  },
  // The same suites on the node:crypto fallback (docs/platforms.md, "When
  // no native binary loads"), the oracle suites on SQLite through
  // SveltyCMS's driver (__test__/fixtures/dialects.mjs, oracleDrivers, says
  // why).
  {
    name: `JS suite on Node ${run(join(bin, 'node'), ['--version']).trim()}, ALE_BACKEND=js`,
    cmd: join(bin, 'node'),
    args: ['--test', '--test-reporter=spec', ...jsTests],
    env: { ALE_BACKEND: 'js', ALE_TEST_DRIVERS: fallbackDrivers },
    count: (out) => last(out, /ℹ pass (\d+)[\s\S]*?ℹ fail (\d+)/g),
  },
  {
    name: `JS suite on Bun ${run(join(bin, 'bun'), ['--version']).trim()}, ALE_BACKEND=js`,
    cmd: join(bin, 'bun'),
    args: [...bunTest, ...jsTests.map((f) => `./${f}`)],
    env: { ALE_BACKEND: 'js', ALE_TEST_DRIVERS: fallbackDrivers },
    count: (out) => ({ pass: lastNumber(out, /^\s*(\d+) pass$/gm), fail: lastNumber(out, /^\s*(\d+) fail$/gm) }),
  },
  {
    name: 'TypeScript: type tests and the Drizzle layer (tsc)',
    cmd: join(bin, 'tsc'),
    args: ['-p', 'tsconfig.typetest.json'],
    // tsc prints nothing on success. What counts as passed is each assertion
    // that tsc rejects once it is turned around (typeAssertions below).
    count: (out, status) => {
      const errors = (out.match(/error TS\d+/g) ?? []).length;
      if (status !== 0) return { pass: 0, fail: Math.max(errors, 1) };
      try {
        return typeAssertions('tsconfig.typetest.json');
      } catch (e) {
        console.error(e.message);
        return { pass: 0, fail: 1 };
      }
    },
  },
  {
    // The addon again, with --features test-panic (a profile without LTO, so
    // it builds in under a minute), to show a panic anywhere is ALE_INTERNAL.
    name: 'forced panics on Node (the addon built with --features test-panic)',
    cmd: 'sh',
    args: ['-c', `cargo build --quiet --profile test-panic --features test-panic --lib && cp target/test-panic/libsveltycms_ale.so "$ALE_TEST_PANIC_ADDON" && "${join(bin, 'node')}" --test --test-reporter=spec __test__/panic.check.mjs`],
    count: (out) => last(out, /ℹ pass (\d+)[\s\S]*?ℹ fail (\d+)/g),
  },
  {
    name: 'forced panics on Bun',
    cmd: join(bin, 'bun'),
    args: [...bunTest, './__test__/panic.check.mjs'],
    count: (out) => ({ pass: lastNumber(out, /^\s*(\d+) pass$/gm), fail: lastNumber(out, /^\s*(\d+) fail$/gm) }),
  },
  {
    name: 'forced panics on Bun, ALE_BUN_PATH=napi',
    cmd: join(bin, 'bun'),
    args: [...bunTest, './__test__/panic.check.mjs'],
    env: { ALE_BUN_PATH: 'napi' },
    count: (out) => ({ pass: lastNumber(out, /^\s*(\d+) pass$/gm), fail: lastNumber(out, /^\s*(\d+) fail$/gm) }),
  },
  {
    // 200,000 rows × 2 jobs × 2 servers take minutes: once, on Node, rather
    // than in each of the five runs of the JS suite above.
    name: 'several workers on one table: rotateKeys and convertToTenantKeys on PostgreSQL and MariaDB, one worker killed (Node 24)',
    cmd: join(bin, 'node'),
    args: ['--test', '--test-reporter=spec', '__test__/lease-workers.check.mjs'],
    count: (out) => last(out, /ℹ pass (\d+)[\s\S]*?ℹ fail (\d+)/g),
  },
  {
    name: 'online rotation of the search key: two reindexSearch workers on PostgreSQL while queries run (Node 24)',
    cmd: join(bin, 'node'),
    args: ['--test', '--test-reporter=spec', '__test__/search-rotation.check.mjs'],
    count: (out) => last(out, /ℹ pass (\d+)[\s\S]*?ℹ fail (\d+)/g),
  },
  {
    name: "drizzle-kit against the package's columns and key table: generate and migrate on SQLite, PostgreSQL and MariaDB, push on SQLite and PostgreSQL, and on MariaDB up to its question (Node 24)",
    cmd: join(bin, 'node'),
    args: ['--test', '--test-reporter=spec', '__test__/drizzle-kit.check.mjs'],
    count: (out) => last(out, /ℹ pass (\d+)[\s\S]*?ℹ fail (\d+)/g),
  },
  {
    name: 'the SvelteKit 3 example from packed tarballs (vite build with no key, node build, bun build/index.js, vite dev)',
    cmd: join(bin, 'node'),
    args: ['--test', '--test-reporter=spec', '__test__/sveltekit.check.mjs'],
    count: (out) => last(out, /ℹ pass (\d+)[\s\S]*?ℹ fail (\d+)/g),
  },
  {
    name: 'install from packed tarballs (Node 24 and Bun)',
    cmd: join(bin, 'node'),
    args: ['--test', '--test-reporter=spec', '__test__/install.check.mjs'],
    count: (out) => last(out, /ℹ pass (\d+)[\s\S]*?ℹ fail (\d+)/g),
  },
];

/**
 * The type tests' assertions that tsc really checks. It compiles the test
 * file turned around, in memory: `Expect<T extends true>` becomes
 * `Expect<T extends false>`, and every `@ts-expect-error` an ordinary comment.
 * Each `Expect<…>` (found in the syntax tree, so comments do not count) and
 * each line under a directive must then have an error of its own: one that
 * does not (an `Expect<any>`, a file tsc does not compile) fails, and so does
 * an error anywhere else.
 */
function typeAssertions(configFile) {
  const ts = createRequire(import.meta.url)('typescript');
  const config = ts.getParsedCommandLineOfConfigFile(join(root, configFile), {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    },
  });
  const files = new Map();
  for (const file of config.fileNames) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const sites = new Map(); // line → what is asserted there; errors are matched to assertions by line
    const site = (line, text) => {
      if (sites.has(line)) throw new Error(`${file}:${line + 1}: two assertions on one line; give each its own`);
      sites.set(line, text);
    };
    const visit = (node) => {
      if (ts.isTypeReferenceNode(node) && node.typeName.getText(source) === 'Expect' && node.typeArguments?.length === 1) {
        site(source.getLineAndCharacterOfPosition(node.typeArguments[0].getStart(source)).line, node.getText(source));
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
    const expectations = sites.size;
    const lines = source.text.split('\n');
    lines.forEach((line, i) => {
      if (/^\s*\/\/\/?\s*@ts-expect-error/.test(line)) site(i + 1, `${line.trim()}\n  ${lines[i + 1]?.trim()}`);
    });
    if (sites.size === 0) continue;
    const declaration = 'type Expect<T extends true> = T;';
    if (expectations > 0 && source.text.split(declaration).length !== 2) {
      console.error(`${file}: expected exactly one \`${declaration}\`, the assertion type these counts rely on`);
      return { pass: 0, fail: 1 };
    }
    const turned = source.text.replace(declaration, 'type Expect<T extends false> = T;').replace(/^(\s*\/\/\/?\s*)@(ts-expect-error)/gm, '$1$2');
    files.set(resolve(file), { turned, sites });
  }
  const host = ts.createCompilerHost(config.options);
  const read = host.getSourceFile;
  host.getSourceFile = (name, version, ...rest) =>
    files.has(resolve(name)) ? ts.createSourceFile(name, files.get(resolve(name)).turned, version) : read.call(host, name, version, ...rest);
  const program = ts.createProgram({ rootNames: config.fileNames, options: config.options, host });
  const failed = new Map([...files.keys()].map((f) => [f, new Set()]));
  let fail = 0;
  for (const d of ts.getPreEmitDiagnostics(program)) {
    const file = d.file && resolve(d.file.fileName);
    const line = d.file?.getLineAndCharacterOfPosition(d.start ?? 0).line;
    if (files.get(file)?.sites.has(line)) failed.get(file).add(line);
    else {
      fail++;
      console.error(`an error the turned-around type tests should not have: ${ts.formatDiagnostic(d, host)}`);
    }
  }
  let pass = 0;
  for (const [file, { sites }] of files) {
    for (const [line, text] of sites) {
      if (failed.get(file).has(line)) pass++;
      else {
        fail++;
        console.error(`${file}:${line + 1}: an assertion tsc does not check: ${text}`);
      }
    }
  }
  console.log(`${pass} type assertions, each rejected by tsc when turned around`);
  return { pass, fail };
}

// The names of failed tests, from either runner's output, so the summary at
// the end of a long log says which ones failed.
// (Node's lines include the suites around a failed test; each name once.)
function failedNames(out) {
  const names = new Set([...out.matchAll(/^\(fail\) (.+?)(?: \[[\d.]+m?s\])?$/gm)].map((m) => m[1]));
  for (const m of out.matchAll(/^\s*✖ (.+?)(?: \([\d.]+m?s\))?$/gm)) if (m[1] !== 'failing tests:') names.add(m[1]);
  return [...names];
}

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

const chosen = suites.filter((s) => !options.only || s.name.toLowerCase().includes(options.only.toLowerCase()));
if (chosen.length === 0) {
  console.error(`no suite's name contains "${options.only}"`);
  process.exit(1);
}
const summary = [];
let failed = false;
for (const suite of chosen) {
  console.log(`\n=== ${suite.name}`);
  const started = performance.now();
  const r = spawnSync(suite.cmd, suite.args, { cwd: root, encoding: 'utf8', env: { ...process.env, ...suite.env }, maxBuffer: 256 << 20 });
  const out = `${r.stdout ?? ''}\n${r.stderr ?? ''}`;
  process.stdout.write(r.stdout ?? '');
  process.stderr.write(r.stderr ?? '');
  const { pass, fail } = suite.count(out, r.status);
  const ok = r.status === 0 && fail === 0 && pass > 0;
  if (pass === 0) console.error(`!!! ${suite.name}: the runner found no tests`);
  if (!ok) failed = true;
  summary.push({ suite: suite.name, pass, fail, exit: r.status, ok, names: ok ? [] : failedNames(out), seconds: Math.round((performance.now() - started) / 1000) });
}

console.log('\n=== summary');
for (const s of summary) {
  console.log(`${s.ok ? 'ok  ' : 'FAIL'} ${s.suite}: ${s.pass} passed, ${s.fail} failed (exit ${s.exit}, ${s.seconds} s)`);
  for (const name of s.names) console.log(`       failed: ${name}`);
}
const pass = summary.reduce((a, s) => a + s.pass, 0);
const fail = summary.reduce((a, s) => a + s.fail, 0) + summary.filter((s) => !s.ok && s.fail === 0).length;
console.log(`${pass} passed, ${fail} failed`);
process.exit(failed ? 1 : 0);
