// The Unicode data search cuts and folds text with, read from tables.ts (the
// core's data, so both backends agree whatever the engine's Unicode version).
import { FOLDS, MARK_RANGES, WORD_RANGES } from './tables.js';

/** Whether code point `c` lies in one of `ranges` (first, last, …; sorted). */
function inRanges(ranges: readonly number[], c: number): boolean {
  let lo = 0;
  let hi = ranges.length / 2 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (c < ranges[2 * mid]) hi = mid - 1;
    else if (c > ranges[2 * mid + 1]) lo = mid + 1;
    else return true;
  }
  return false;
}

export const isWordChar = (c: number): boolean => inRanges(WORD_RANGES, c);
export const isMark = (c: number): boolean => inRanges(MARK_RANGES, c);

let folds: Map<number, string> | undefined;

/** Full case folding of `text`, character by character. */
export function caseFold(text: string): string {
  if (folds === undefined) {
    folds = new Map();
    for (const entry of FOLDS.split(';')) {
      if (entry === '') continue;
      const [from, ...to] = entry.split(',').map(Number);
      folds.set(from, String.fromCodePoint(...to));
    }
  }
  let out = '';
  for (const ch of text) out += folds.get(ch.codePointAt(0) as number) ?? ch;
  return out;
}

/** `text` without its combining marks. */
export function dropMarks(text: string): string {
  let out = '';
  for (const ch of text) if (!isMark(ch.codePointAt(0) as number)) out += ch;
  return out;
}
