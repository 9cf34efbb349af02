// Legacy plaintext: how long a column with `legacyPlaintext` serves values
// that are not envelopes, and how many it has served (see the option in
// codec.ts).
import { codedError } from '../shared/errors.js';
import { state } from './state.js';

/** How many legacy plaintext values each `collection.field` has read (legacyPlaintext: true). */
export function legacyPlaintextReads(): Record<string, number> {
  return Object.fromEntries(state.legacyReads);
}

/** Until when a column reads legacy plaintext (ms since the epoch), or undefined when it does not. */
export function legacyDeadline(option: boolean | { until: Date | string } | undefined, column: string): number | undefined {
  if (!option) return undefined;
  if (option === true) return Infinity;
  const until = new Date(option.until).getTime();
  if (Number.isNaN(until)) {
    throw codedError('ALE_INVALID_INPUT', `encrypted column "${column}": legacyPlaintext.until must be a Date or a date string`);
  }
  return until;
}

/**
 * Counts one legacy read of `counterKey` (`collection.field`). The first read
 * of each column emits a process warning, because from then on whoever can
 * write to the table can make the column serve any text.
 */
export function countLegacyRead(counterKey: string, column: string, collection: string): void {
  const reads = (state.legacyReads.get(counterKey) ?? 0) + 1;
  state.legacyReads.set(counterKey, reads);
  if (reads === 1) {
    process.emitWarning(
      `column "${column}" (collection "${collection}") served a value that is not an envelope as legacy plaintext. ` +
        'Until migratePlaintext() has encrypted every value and legacyPlaintext is removed, anyone who can write ' +
        'to the table can make this column serve any text. Counts: legacyPlaintextReads().',
      { type: 'AleWarning', code: 'ALE_LEGACY_PLAINTEXT' },
    );
  }
}
