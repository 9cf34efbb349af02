// Builds the TypeScript layers (ts/drizzle, ts/sveltycms, ts/shared) twice,
// as ESM (dist/esm) and CommonJS (dist/cjs), each with its .d.ts and a
// package.json that tells runtimes which it is.
//
// The sources import the addon's entry point as '../../index.js' (the
// repository root, seen from ts/<layer>/), which gives tsc the generated
// types. Built, they sit one level deeper (dist/<format>/<layer>/), where that
// path names dist/index.js: a one-line CommonJS forwarder to the package
// entry (main.cjs, which loads the native addon or the JS fallback), written
// here, so both formats share one backend and its process-wide state.
// ts/fallback is that fallback: it imports only types from the root.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const tsc = join(root, 'node_modules', '.bin', 'tsc');
rmSync(join(root, 'dist'), { recursive: true, force: true });
for (const [config, dir, type] of [['tsconfig.json', 'esm', 'module'], ['tsconfig.cjs.json', 'cjs', 'commonjs']]) {
  execFileSync(tsc, ['-p', config], { cwd: root, stdio: 'inherit' });
  mkdirSync(join(root, 'dist', dir), { recursive: true });
  writeFileSync(join(root, 'dist', dir, 'package.json'), `${JSON.stringify({ type })}\n`);
}
writeFileSync(join(root, 'dist', 'index.js'), "'use strict';\nmodule.exports = require('../main.cjs');\n");
writeFileSync(join(root, 'dist', 'index.d.ts'), "export * from '../main.js';\n");
