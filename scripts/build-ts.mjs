// Builds the Drizzle layer twice, as ESM (dist/esm) and CommonJS (dist/cjs),
// each with its .d.ts and a package.json that tells runtimes which it is.
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
