// The values a range column holds, as the envelope stores them (canonical
// text) and as the range index orders them (a 64-bit code whose unsigned
// order is the values' order). One definition per type, used by the typed
// encrypted columns and the range index beside them.
import { types } from 'node:util';
import { codedError } from '../../shared/errors.js';

export type RangeType = 'number' | 'bigint' | 'date';
/** The JS type of each range type's values. */
export interface RangeValues {
  number: number;
  bigint: bigint;
  date: Date;
}
export type RangeValue = RangeValues[RangeType];

export const RANGE_TYPES: readonly RangeType[] = ['number', 'bigint', 'date'];

const U64 = (1n << 64n) - 1n;
const I64_MIN = -(1n << 63n);
const I64_MAX = (1n << 63n) - 1n;

const refused = (what: string, type: RangeType, why: string) => codedError('ALE_INVALID_INPUT', `${what}: a ${type} column ${why}`);

/** `value` checked as a value of `type`; `what` names the caller in the error, which quotes no value. */
export function checkValue(type: RangeType, value: unknown, what: string): RangeValue {
  switch (type) {
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) throw refused(what, type, 'holds finite numbers');
      return value;
    case 'bigint':
      if (typeof value !== 'bigint') throw refused(what, type, 'holds bigints');
      if (value < I64_MIN || value > I64_MAX) throw refused(what, type, 'holds signed 64-bit integers (-2^63 to 2^63 - 1)');
      return value;
    case 'date':
      // types.isDate: a Date from another realm (a vm context, a worker's structured clone) is one too.
      if (!types.isDate(value) || Number.isNaN(value.getTime())) throw refused(what, type, 'holds valid Date objects');
      return value;
  }
}

// A value's eight bytes while its code is made, one view for every call:
// making one per call, and flipping bits in BigInt arithmetic, was most of
// the cost, and an ordered page codes every row it reads (docs/performance.md,
// "Ranges: a value's code"). Big-endian, as DataView's default is, so the
// first word is the high one. Cleared after each use: a code tells as much
// as its value.
const scratch = new DataView(new ArrayBuffer(8));
const TOP = 0x8000_0000;

/**
 * The code of a checked value. Numbers: IEEE 754 bits with the sign bit
 * flipped for positives and every bit flipped for negatives, the usual map
 * that makes unsigned order the numbers' order (-0 is 0). Bigints: two's
 * complement with the sign bit flipped. Dates: their milliseconds since
 * 1970 as a signed 64-bit integer with the sign bit flipped, so dates
 * before 1970 come first.
 */
export function codeOf(type: RangeType, value: RangeValue): bigint {
  if (type === 'number') {
    scratch.setFloat64(0, (value as number) === 0 ? 0 : (value as number));
    const high = scratch.getUint32(0);
    if (high & TOP) {
      scratch.setUint32(0, ~high);
      scratch.setUint32(4, ~scratch.getUint32(4));
    } else scratch.setUint32(0, high | TOP);
  } else {
    if (type === 'bigint') scratch.setBigInt64(0, value as bigint);
    else {
      // A Date's time is a whole number of milliseconds within ±8.64e15, so both words are exact.
      const ms = (value as Date).getTime();
      const high = Math.floor(ms / 2 ** 32);
      scratch.setInt32(0, high);
      scratch.setUint32(4, ms - high * 2 ** 32);
    }
    scratch.setUint32(0, scratch.getUint32(0) ^ TOP);
  }
  const code = scratch.getBigUint64(0);
  scratch.setFloat64(0, 0);
  return code;
}

/**
 * The first and last codes a value of `type` can have: every code for a
 * bigint; ±Number.MAX_VALUE's for a number; for a date, ±8.64e15 ms, the
 * range of a JS Date (ECMA-262, "Time Values and Time Range").
 */
export function codeBounds(type: RangeType): readonly [bigint, bigint] {
  if (type === 'number') return [codeOf(type, -Number.MAX_VALUE), codeOf(type, Number.MAX_VALUE)];
  if (type === 'date') return [codeOf(type, new Date(-8.64e15)), codeOf(type, new Date(8.64e15))];
  return [0n, U64];
}

/** The text an envelope of `type` holds: `String(n)`, the bigint's digits, the date's ISO form. */
export function textOf(type: RangeType, value: RangeValue): string {
  return type === 'date' ? (value as Date).toISOString() : String(value);
}

/** The value of an envelope's text, or ALE_INVALID_INPUT when it is not one `textOf` writes. */
export function valueOf(type: RangeType, text: string, what: string): RangeValue {
  let value: RangeValue | undefined;
  if (type === 'number' && /^-?(\d+(\.\d+)?(e[+-]\d+)?|\.\d+)$/i.test(text)) value = Number(text);
  else if (type === 'bigint' && /^-?\d+$/.test(text)) value = BigInt(text);
  else if (type === 'date' && /^[+-]?\d{4,6}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(text)) value = new Date(text);
  if (value === undefined || (type === 'date' && Number.isNaN((value as Date).getTime()))) throw refused(what, type, 'read a value that is not one of its own');
  return checkValue(type, value, what);
}
