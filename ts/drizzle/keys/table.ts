// What every dialect's key table has in common: its rows, the name rule, and
// how a dialect describes itself to the key store.
import { sql, type SQL } from 'drizzle-orm';
import { codedError } from '../../shared/errors.js';
import { ensureTable, type KeptTableSpec } from '../kept-tables.js';

/** What a key is for: sealing values, or keying their blind indexes. */
export type Purpose = 'data' | 'index';
/**
 * active: seals new values; decrypt-only: a previous data key; destroyed: a
 * previous data key no value needed any more (keys.destroyRetired), a
 * tombstone; shredded: every key of the tenant destroyed (a tombstone).
 */
export type KeyState = 'active' | 'decrypt-only' | 'destroyed' | 'shredded';

/** One row of the key table. */
export interface KeyRow {
  /** 22 base64url characters: the id a v2 envelope names. */
  keyId: string;
  tenant: string;
  purpose: Purpose;
  /** 1 for a tenant's first keys, one more at each rotation; unique per tenant and purpose. */
  generation: number;
  state: KeyState;
  /** The key wrapped by the KEK; NULL once shredded. */
  wrappedKey: string | null;
  /** The reference of the KEK that wrapped it; NULL once shredded. */
  kek: string | null;
  /** Milliseconds since the epoch, by the database's clock (KeyTableSpec.now). */
  createdAt: number;
  updatedAt: number;
  /** Encryptions under this key, summed over every process that has flushed its counts (tenantKeys' flushEveryMs). */
  encryptions: number;
}

/** A row as the store inserts it: its timestamps are the database's clock, filled in by the statement. */
export type NewKeyRow = Omit<KeyRow, 'createdAt' | 'updatedAt'> & { createdAt: SQL; updatedAt: SQL };

/** A dialect's key table and the statements that create it. */
export interface KeyTableSpec extends KeptTableSpec {
  /**
   * The database's clock in milliseconds since the epoch, as an SQL
   * expression: every write to the key table stamps `updated_at` with it, so
   * that change checks compare one clock, whatever the processes' clocks say.
   */
  now: SQL;
  /** The Drizzle table for `name`. */
  table(name: string): unknown;
}

/** The default table name. */
export const DEFAULT_TABLE = 'ale_keys';

/**
 * A table name that is safe to put in DDL unquoted in every dialect, and
 * that names the same table there as in Drizzle's quoted queries: lower
 * case only, since PostgreSQL folds unquoted names to lower case.
 */
export function checkedTableName(name: string): string {
  if (typeof name !== 'string' || !/^[a-z_][a-z0-9_]{0,47}$/.test(name)) {
    throw codedError('ALE_INVALID_INPUT', 'tenantKeys: options.table must be a plain SQL name: lower-case letters, digits and _, not starting with a digit, at most 48 characters');
  }
  return name;
}

/**
 * CREATE TABLE and CREATE INDEX statements for SQLite and PostgreSQL, which
 * differ only in the type of the timestamps.
 */
export function createStatements(name: string, timestamp: 'integer' | 'bigint'): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${name} (key_id text PRIMARY KEY NOT NULL, tenant text NOT NULL, purpose text NOT NULL, generation integer NOT NULL, ` +
      `state text NOT NULL, wrapped_key text, kek text, created_at ${timestamp} NOT NULL, updated_at ${timestamp} NOT NULL, ` +
      `encryptions ${timestamp} NOT NULL DEFAULT 0)`,
    `CREATE UNIQUE INDEX IF NOT EXISTS ${name}_generation ON ${name} (tenant, purpose, generation)`,
    `CREATE INDEX IF NOT EXISTS ${name}_updated ON ${name} (updated_at)`,
  ];
}

/** The encryption-count column, for tables made before it; `IF NOT EXISTS` where the dialect has it (PostgreSQL). */
export const countColumn = (name: string, type: 'integer' | 'bigint', ifNotExists = false): string =>
  `ALTER TABLE ${name} ADD COLUMN ${ifNotExists ? 'IF NOT EXISTS ' : ''}encryptions ${type} NOT NULL DEFAULT 0`;

/**
 * The stamp an updated row gets: the database's clock, or one more than
 * the row had when that is not later (two writes in one millisecond, or a
 * row stamped ahead by an older version's clock). Every update moves a
 * row's stamp up, so a tenant's newest stamp changes with every change
 * and the change check cannot miss one.
 */
export function touchedStamp(table: { updatedAt: unknown }, now: SQL): SQL {
  const stamp = table.updatedAt;
  return sql`CASE WHEN ${now} > ${stamp} THEN ${now} ELSE ${stamp} + 1 END`;
}

/**
 * Creates the key table and its indexes when they are missing, and adds the
 * columns a table made by an earlier version lacks (kept-tables.ts): one
 * that has the encryption counts is up to date.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function ensureKeyTable(spec: KeyTableSpec, db: any, name: string): Promise<void> {
  return ensureTable(db, spec, name, 'encryptions');
}
