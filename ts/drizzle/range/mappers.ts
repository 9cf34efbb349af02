// The typed encrypted columns' mappers: a number, bigint or Date checked,
// written as its canonical text (range/encoding.ts) and encrypted as
// encryptedText encrypts a string; read back as the same type.
import type { FieldCodec } from '../codec.js';
import type { Storage } from '../storage.js';
import { checkValue, textOf, valueOf, type RangeType, type RangeValue, type RangeValues } from './encoding.js';

export function rangeMappers<T extends RangeType>(codec: FieldCodec, storage: Storage, type: T) {
  const what = `encrypted ${type} column "${codec.column}"`;
  const serialise = (value: unknown) => textOf(type, checkValue(type, value, what));
  const parse = (text: string) => valueOf(type, text, what);
  type V = RangeValues[T];
  return storage === 'binary'
    ? { toDriver: (value: V): Buffer => codec.encryptBinary(value as RangeValue, serialise), fromDriver: (stored: unknown): V => codec.decryptBinary(stored, parse) as V }
    : { toDriver: (value: V): string => codec.encrypt(value as RangeValue, serialise), fromDriver: (stored: string): V => codec.decrypt(stored, parse) as V };
}
