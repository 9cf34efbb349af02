// Whether a finished job's ranges still cover the key space they were cut
// from. The ranges chain: range i covers the keys above its start_key up to
// and including its end_key, range 0 starts at the beginning (NULL), the
// last one runs to the end (NULL), each starts where the one before ends,
// and the indexes run 0..n-1 with none missing. A range is done once a
// worker walked it to its end, which it records in done_upto. A job table
// edited by hand, or damaged, breaks one of these, and rows go unvisited.

/** A range as the check reads it: keys as the job table holds them (JSON text). */
export interface RangeState {
  idx: number;
  startKey: string | null;
  endKey: string | null;
  state: string;
  doneUpto: string | null;
}

/**
 * What a range's done_upto holds once a worker walked it to its end: its
 * end_key, or this for the last range, which has none. Keys are stored as
 * JSON, and this is not JSON, so no key reads as it.
 */
export const TO_THE_END = 'end';

/** done_upto of a range walked to its end. */
export const walkedTo = (endKey: string | null): string => endKey ?? TO_THE_END;

/** Keys no range walked: above `after` (from the start when null) up to `upTo` (to the end when null). */
export interface Gap {
  after: string | null;
  upTo: string | null;
}

/** How many ranges are inconsistent (missing ones included), and the keys they leave unwalked. */
export function checkChain(ranges: RangeState[]): { inconsistent: number; gaps: Gap[] } {
  if (ranges.length === 0) return { inconsistent: 1, gaps: [{ after: null, upTo: null }] };
  const sorted = [...ranges].sort((a, b) => a.idx - b.idx);
  const gaps: Gap[] = [];
  const last = sorted[sorted.length - 1];
  // The primary key (job, idx) keeps indexes unique, so the ones missing below the highest are the difference.
  let inconsistent = Math.max(0, last.idx + 1 - sorted.length) + sorted.filter((r) => r.idx < 0).length;
  sorted.forEach((range, i) => {
    let bad = false;
    const before = i === 0 ? null : sorted[i - 1].endKey;
    if (range.startKey !== before) {
      // A break right after missing indexes is theirs, counted above.
      if (range.idx === (i === 0 ? 0 : sorted[i - 1].idx + 1)) bad = true;
      // Keys between the previous range's end and this one's start belong to neither. A range after one
      // that runs to the end, or one that starts at the beginning, leaves none out.
      if (range.startKey !== null && (i === 0 || before !== null)) gaps.push({ after: before, upTo: range.startKey });
    }
    if (range === last && range.endKey !== null) {
      bad = true;
      gaps.push({ after: range.endKey, upTo: null });
    }
    if (range.state === 'done' && range.doneUpto !== walkedTo(range.endKey)) {
      bad = true;
      if (range.doneUpto !== TO_THE_END) gaps.push({ after: range.doneUpto ?? range.startKey, upTo: range.endKey });
    }
    if (bad && range.idx >= 0) inconsistent++;
  });
  return { inconsistent, gaps };
}
