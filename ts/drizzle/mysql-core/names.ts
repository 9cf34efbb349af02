// Quoting MySQL identifiers for the SQL this dialect writes: a schema may
// name tables and columns with any character, a backtick included.

/** `id` quoted with backticks, a backtick in it doubled. */
export function quoteId(id: string): string {
  return `\`${id.replaceAll('`', '``')}\``;
}
