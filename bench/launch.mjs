// Entry point of the `bench` script. `bun bench` runs package.json scripts
// through a shell whose `node` may be any Node on PATH, so this launcher
// (plain JS, fine on any Node) starts the harness on the runtime that was
// asked for: Bun when Bun invoked the script, the pinned Node 24 otherwise.
// `--runtime both` (npm run bench:all) runs both and merges the reports.
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = join(root, 'node_modules', '.bin');
const args = process.argv.slice(2);
const pick = args.indexOf('--runtime');
let wanted = pick >= 0 ? args.splice(pick, 2)[1] : null;
if (!wanted) {
  const agent = process.env.npm_config_user_agent ?? '';
  wanted = agent.startsWith('bun/') || process.versions.bun ? 'bun' : 'node';
}
const runtimes = wanted === 'both' ? ['node', 'bun'] : [wanted];
const outIndex = args.indexOf('--out');
const out = outIndex >= 0 ? args[outIndex + 1] : join(root, 'bench', 'results');

const before = new Set(safeList(out));
let status = 0;
for (const rt of runtimes) {
  // --expose-gc: the micro tiers collect the heap before each timed set (Bun has Bun.gc).
  const flags = rt === 'node' ? ['--expose-gc'] : [];
  const r = spawnSync(join(bin, rt), [...flags, join(root, 'bench', 'run.mjs'), ...args], { stdio: 'inherit', cwd: root });
  status ||= r.status ?? 1;
}
if (runtimes.length > 1) {
  const fresh = safeList(out).filter((f) => f.endsWith('.json') && !before.has(f) && !f.startsWith('combined-'));
  const results = fresh.map((f) => JSON.parse(readFileSync(join(out, f), 'utf8')));
  const { markdown, svg } = await import('./report.mjs');
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  writeFileSync(join(out, `combined-${stamp}.json`), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(join(out, `combined-${stamp}.svg`), svg(results));
  writeFileSync(join(out, `combined-${stamp}.md`), markdown(results, `combined-${stamp}.svg`));
  console.log(`combined report: ${join(out, `combined-${stamp}.md`)}`);
}
process.exit(status);

function safeList(dir) {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
