// A MySQL identifier in SQL text: the migrations this dialect writes
// (searchIndexSql, rangeTokenTableSql) and the check of a token table name
// tables and columns that a schema may name with any character.

/** `id` quoted with backticks, a backtick in it doubled. */
export function quoteId(id: string): string {
  return `\`${id.replaceAll('`', '``')}\``;
}
