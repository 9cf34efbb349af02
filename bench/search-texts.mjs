// The 4 KB and 256 B texts of the search bench (bench/search.mjs) and of
// the experiments and the footprint probe that take the same values: on
// their own, so that a program that needs only the texts does not load the
// bench with them.
import { Faker, base, en } from '@faker-js/faker';

/** Distinct texts of `bytes` ASCII bytes: lorem paragraphs cut at a word (the experiments take the 4 KB ones). */
export function searchTexts(bytes, count) {
  const f = new Faker({ locale: [en, base] });
  f.seed(bytes);
  return Array.from({ length: count }, () => {
    let s = '';
    while (s.length < bytes) s += `${f.lorem.paragraph()} `;
    return s.slice(0, bytes).replace(/\s+\S*$/, '');
  });
}
