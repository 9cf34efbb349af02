// A bytea as PostgreSQL writes it as text: `\x` and hex digits. The
// drivers hand it over so when drizzle's relational queries nest a
// relation's columns in JSON (at the top level they give a Buffer). Read as
// text, an envelope failed, and a legacy plaintext was served, and saved
// again, as its hex digits.

/** The bytes of `text` when it is a bytea's text form; undefined otherwise. */
export function byteaText(text: string): Uint8Array | undefined {
  return /^\\x(?:[0-9a-f]{2})*$/.test(text) ? Buffer.from(text.slice(2), 'hex') : undefined;
}
