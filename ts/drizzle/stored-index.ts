// What a derived column (a blind index, search tokens) reads back: an opaque value
// that the column writes back unchanged. A CMS saves a document by reading a
// row, spreading it and updating it; if the index came back as a plain
// string, the column could not tell it from a plaintext to hash, would hash
// the hash, and the row would stop matching its own lookups.

/**
 * The brand, from Symbol.for so that a value read through one build (ESM or
 * CommonJS) is recognised by a column of the other. A brand on an object,
 * not a marker inside a string: no text a user submits (a form field, a JSON
 * body) can pass for a stored index and reach the column unhashed.
 */
const STORED = Symbol.for('@sveltycms/ale/stored-index');

/**
 * Where a column read the StoredIndex (index-origin.ts), beside the brand
 * and not in it: a copy of an earlier version of the package in the same
 * process tests the brand for `true`, and must still know the value.
 */
const ORIGIN = Symbol.for('@sveltycms/ale/stored-index-origin');

/**
 * A blind index as stored, read back from its column. Writing it to the
 * same index for the same tenant stores it as it is; comparing with `eq`
 * compares it as it is; anywhere else it is refused (index-origin.ts). It
 * holds no plaintext, only the keyed hash.
 *
 * A String object (`String(index)` and `index.valueOf()` give the hash), so
 * that serialisers that carry boxed strings, such as devalue in SvelteKit's
 * load data, carry it too. `JSON.stringify` leaves it out (`toJSON` gives
 * undefined): a row sent to a browser as JSON and posted back would
 * otherwise bring the hash back as a plain string, which the column would
 * take for a plaintext. Without the field, an update leaves the stored
 * index alone.
 */
export class StoredIndex extends String {
  declare readonly [STORED]: true;
  declare readonly [ORIGIN]?: IndexOrigin;

  /** `origin`: where the column read it; a StoredIndex made without one can go into any column. */
  constructor(stored: string, origin?: IndexOrigin) {
    super(stored);
    Object.defineProperty(this, STORED, { value: true });
    if (origin !== undefined) Object.defineProperty(this, ORIGIN, { value: origin });
    // Not Object.freeze: freezing a String object freezes each of its
    // characters as a property, which JavaScriptCore does one by one, so a
    // search index of a few KB took milliseconds to read back on Bun
    // (docs/performance.md, "Search"). Nothing can be added to it all the
    // same, and its value and brand cannot change.
    Object.preventExtensions(this);
  }

  /** The stored form: a blind index's hash (base64url), or a search index's tokens. */
  get value(): string {
    return this.valueOf();
  }

  toJSON(): undefined {
    return undefined;
  }
}

/**
 * Where a StoredIndex was read: which index (`key`, compared; `text`, as a
 * message names it) and the tenant in scope then, if one was. Plain data,
 * so that either build reads the other's.
 */
export interface IndexOrigin {
  readonly key: string;
  readonly text: string;
  readonly tenant: string | undefined;
  /** Set when the driver handed the tokens back rounded: the value is read, and refused where it would be written or compared. */
  readonly rounded?: true;
}

/** The stored hash when `value` is a StoredIndex of either build, else undefined. */
export function storedIndexOf(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || (value as { [STORED]?: unknown })[STORED] !== true) return undefined;
  return String.prototype.valueOf.call(value);
}

/** Where the StoredIndex `value` was read, when a column read it. */
export function originOf(value: unknown): IndexOrigin | undefined {
  if (storedIndexOf(value) === undefined) return undefined;
  const origin = (value as { [ORIGIN]?: unknown })[ORIGIN];
  return typeof origin === 'object' && origin !== null ? (origin as IndexOrigin) : undefined;
}
