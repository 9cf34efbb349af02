// Whether an SQL statement's text names an identifier: the start-up checks
// (SQLite's FTS5 triggers, MySQL's token table triggers) read a trigger's
// statement from the schema and look for the table and column it must write.

/** Whether `sqlText` names `name` as a whole identifier, quoted or not (a quote in it doubled), in any case. */
export function mentions(sqlText: string, name: string): boolean {
  return [name, name.replaceAll('"', '""'), name.replaceAll('`', '``')].some((form) => {
    const escaped = form.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    return new RegExp(`(^|[^\\w$])${escaped}($|[^\\w$])`, 'i').test(sqlText);
  });
}
