// The form text is matched on, as crates/core/src/search/normalize.rs makes
// it: NFKC (the engine's), full case folding, NFKC; with accent folding,
// combining marks dropped from the decompositions.
import { caseFold, dropMarks } from './unicode.js';

export interface Folding {
  /** Drop accents and other combining marks. */
  accents: boolean;
}

// eslint-disable-next-line no-control-regex
const ASCII = /^[\x00-\x7f]*$/;

export function normalize(text: string, folding: Folding): string {
  if (ASCII.test(text)) return text.toLowerCase();
  if (folding.accents) {
    const bare = dropMarks(text.normalize('NFKD'));
    return dropMarks(caseFold(bare).normalize('NFKD')).normalize('NFKC');
  }
  return caseFold(text.normalize('NFKC')).normalize('NFKC');
}
