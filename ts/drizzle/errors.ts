// The two classes a failed cell is reported with. They are defined here but
// not exported to users from here: state.ts keeps the first build's copies,
// so that `instanceof` holds across the ESM and CommonJS builds, and
// failures.ts exports those.

/** An Error with an `ALE_*` code and, where known, where the bad value sits. */
export class ColumnError extends Error {
  readonly code: string;
  readonly column: string;
  readonly collection: string;
  declare readonly table?: string;
  declare readonly rowKey?: unknown;
  /** The field of the AAD, when it is not the column's name. */
  declare readonly field?: string;
  /** The tenant the value was bound to, where one was in scope. */
  declare readonly tenant?: string;

  constructor(
    cause: { code?: string; message: string },
    where: { column: string; collection: string; field?: string; table?: string; rowKey?: unknown; tenant?: string },
  ) {
    const field = where.field !== undefined && where.field !== where.column ? where.field : undefined;
    const at = [
      where.table && `table "${where.table}"`,
      `column "${where.column}"`,
      `collection "${where.collection}"`,
      field !== undefined && `field "${field}"`,
      where.tenant !== undefined && `tenant "${where.tenant}"`,
      where.rowKey !== undefined && `row ${keyText(where.rowKey)}`,
    ]
      .filter(Boolean)
      .join(', ');
    super(`${at}: ${cause.message}`, { cause });
    this.name = 'AleColumnError';
    this.code = cause.code ?? 'ALE_INVALID_INPUT';
    this.column = where.column;
    this.collection = where.collection;
    // Only what is known: an inspected error shows no `table: undefined`.
    if (where.table !== undefined) this.table = where.table;
    if (where.rowKey !== undefined) this.rowKey = where.rowKey;
    if (field !== undefined) this.field = field;
    if (where.tenant !== undefined) this.tenant = where.tenant;
  }
}

/** A row key as a message shows it: JSON, which has no BigInt (a bigint key, PostgreSQL's `bigserial` in mode 'bigint', would throw there). */
export function keyText(key: unknown): string {
  return typeof key === 'bigint' ? `${key}n` : JSON.stringify(key);
}

/**
 * A cell that could not be read inside readWithFailures(): `parsed` when it
 * opened and its text is not what the column reads (JSON, a number, a
 * date), a failure of that one value whatever its code.
 */
export class ReadFailure {
  constructor(
    readonly error: ColumnError,
    readonly parsed = false,
  ) {}
}
