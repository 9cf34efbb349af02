// Every relative link of the documentation resolves: the file (or folder)
// exists, and an #anchor, in the same page or in another .md page, matches
// one of that page's headings under GitHub's slug rules. Links inside code
// (fenced blocks, `inline code`) are not links and are skipped; links with a
// scheme (https:, mailto:) are not checked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { PAGES, root } from './fixtures/readme-examples.mjs';

// The pages of issue #16's front door, and the other hand-written pages that link into them.
const CHECKED = [...PAGES, 'SECURITY.md', 'bench/README.md'];

/** The page's text with fenced blocks blanked out (lines kept, so line numbers stay right). */
function prose(text) {
  let fence = null;
  return text
    .split('\n')
    .map((line) => {
      const m = /^\s*(`{3,}|~{3,})/.exec(line);
      if (fence) {
        if (m && m[1][0] === fence[0] && m[1].length >= fence.length) fence = null;
        return '';
      }
      if (m) {
        fence = m[1];
        return '';
      }
      return line;
    })
    .join('\n');
}

/** GitHub's anchor for a heading: lowercase, punctuation dropped except `-` and `_`, spaces to `-`. */
export function slug(heading) {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link in a heading counts by its text
    .replace(/<[^>]+>/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of `page`'s headings, with GitHub's -1, -2, … for repeats. */
function anchors(page) {
  const seen = new Map();
  const out = new Set();
  for (const line of prose(readFileSync(join(root, page), 'utf8')).split('\n')) {
    const m = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Every link and image target of `page`, outside code, as { line, target }. */
function links(page) {
  const found = [];
  prose(readFileSync(join(root, page), 'utf8'))
    .split('\n')
    .forEach((text, i) => {
      const line = text.replace(/(`+)[^`]*?\1/g, ''); // inline code spans are not links
      for (const m of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) found.push({ line: i + 1, target: m[1] });
      const def = /^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$/.exec(line); // [label]: target
      if (def) found.push({ line: i + 1, target: def[1] });
    });
  return found;
}

/** What is wrong with `target` as written in `page`, or null. */
export function brokenLink(page, target) {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) return null; // absolute: not ours to check
  const hash = target.indexOf('#');
  const path = decodeURI(hash < 0 ? target : target.slice(0, hash));
  const anchor = hash < 0 ? null : decodeURIComponent(target.slice(hash + 1));
  const file = path === '' ? page : relative(root, join(root, dirname(page), path));
  if (file.startsWith('..')) return `${file} is outside the package`;
  if (!existsSync(join(root, file))) return `${file} does not exist`;
  if (anchor === null) return null;
  if (!file.endsWith('.md')) return `an anchor into ${file}, which has no headings`;
  return anchors(file).has(anchor) ? null : `${file} has no heading with the anchor #${anchor}`;
}

test('links: the slug rules are GitHub’s', () => {
  assert.equal(slug('Search: blind index and FTS'), 'search-blind-index-and-fts');
  assert.equal(slug('SQLite (better-sqlite3 or bun:sqlite)'), 'sqlite-better-sqlite3-or-bunsqlite');
  assert.equal(slug('Layout: the floors'), 'layout-the-floors');
  assert.equal(slug('`encryptedText` and snake_case'), 'encryptedtext-and-snake_case');
  assert.equal(slug('SveltyCMS today → the drop-in'), 'sveltycms-today--the-drop-in');
});

test('links: a broken link or anchor is caught', () => {
  assert.equal(brokenLink('README.md', 'docs/drizzle.md#binary-storage'), null);
  assert.match(brokenLink('README.md', 'docs/no-such-page.md'), /does not exist/);
  assert.match(brokenLink('README.md', 'docs/drizzle.md#no-such-heading'), /no heading/);
  assert.match(brokenLink('README.md', '#no-such-heading'), /no heading/);
  assert.match(brokenLink('docs/drizzle.md', 'drizzle.md#binary-storage') ?? 'resolved', /resolved/);
});

for (const page of CHECKED) {
  test(`links: every relative link in ${page} resolves`, () => {
    assert.ok(existsSync(join(root, page)), `${page} does not exist`);
    const all = links(page);
    const broken = all.map(({ line, target }) => ({ line, target, why: brokenLink(page, target) })).filter((l) => l.why);
    assert.deepEqual(broken.map(({ line, target, why }) => `${page}:${line}: (${target}) ${why}`), []);
  });
}

test('links: the parser finds the links (a check that finds none would pass anything)', () => {
  assert.ok(links('README.md').length >= 10, `README.md: ${links('README.md').length} links found`);
  assert.deepEqual(links('docs/drizzle.md').filter((l) => l.target === '#binary-storage').length > 0, true);
});

test('links: the pages link to each other', () => {
  // the front door reaches every docs page, and each reaches back or onwards
  const readmeTargets = links('README.md').map((l) => l.target.split('#')[0]);
  for (const page of PAGES.filter((p) => p.startsWith('docs/') && !/^docs\/bench-/.test(p))) {
    assert.ok(readmeTargets.includes(page), `README.md does not link to ${page}`);
  }
});
