// What a job's name is bound to: its operation and every option that changes
// what it writes (the table, its key, the columns with their collection,
// field and storage, the tenant, the keyRing's primary key, the tenant key
// store, the indexes with their options and the key their tokens are
// written under), hashed into one fingerprint that every range of the
// job carries. Options that change only how the job runs (batchSize,
// onProgress, workers) are left out, so workers of one job may differ in
// them. The hash keeps the values themselves (a fixed tenant id, say) out of
// the job table. It sits in a column of every range rather than in a row of
// its own: it goes in with the ranges, in their one insert, so no job is
// ever without it, and the queries over ranges need no row to step over.
import { createHash } from 'node:crypto';
import { Column, getTableUniqueName, is, Table } from 'drizzle-orm';
import { columnInfo, searchColumn } from '../probe.js';

/** Options that change how a job runs, not what it writes. */
const HOW = new Set(['batchSize', 'onProgress', 'workers']);
/** Options are a few levels deep (columns → { column }); anything deeper is not an option of ours. */
const DEPTH = 4;

/** The fingerprint of `operation` (a plan's name; undefined for a plan that has none) run with `options`. */
export function fingerprint(operation: string | undefined, options: object): string {
  const shown = Object.fromEntries(Object.entries(options).filter(([name]) => !HOW.has(name)));
  return createHash('sha256')
    .update(JSON.stringify({ operation: operation ?? null, options: describe(shown, 0) }))
    .digest('hex');
}

/** A value as JSON that says what it changes in the writes: columns and tables by name, a ring by its primary key. */
function describe(value: unknown, depth: number): unknown {
  if (value === undefined || value === null || typeof value === 'function') return null;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  if (typeof value === 'bigint') return { bigint: value.toString() };
  if (typeof value !== 'object' || depth > DEPTH) return { deep: true };
  if (is(value, Column)) {
    const info = columnInfo(value);
    const where = `${getTableUniqueName(value.table)}.${value.name}`;
    if (info) return { column: where, collection: info.collection, field: info.field, storage: info.storage, kind: info.kind, keys: info.keys !== undefined };
    // An index column: which index, with what options, and the key its tokens are written under.
    const index = searchColumn(value)?.codec;
    return index ? { column: where, index: index.site.key, keys: index.keys !== undefined, writingKey: index.writingKey() } : { column: where };
  }
  // With its schema: tables of one name in two schemas (a schema per tenant) are two jobs' worth.
  if (is(value, Table)) return { table: getTableUniqueName(value) };
  if (typeof (value as Ring).blindIndex === 'function' && typeof (value as Ring).keyIndex === 'function') return { ring: primaryOf(value as Ring) };
  if (Array.isArray(value)) return value.map((v) => describe(v, depth + 1));
  const proto = Object.getPrototypeOf(value);
  if (proto === Object.prototype || proto === null) {
    // A column's collection and field, given or left out, are its own (any other is refused), and its description holds them.
    const spec = is((value as { column?: unknown }).column, Column);
    const entries = Object.entries(value)
      .filter(([k]) => !(spec && (k === 'collection' || k === 'field')))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return Object.fromEntries(entries.map(([k, v]) => [k, describe(v, depth + 1)]));
  }
  // An instance of some class (the tenant key store, say): its kind, never its fields, which may hold keys.
  return { instance: (proto?.constructor as { name?: string } | undefined)?.name ?? 'object' };
}

interface Ring {
  blindIndex(value: string, tenantId: string, collectionId: string, fieldName: string): string;
  keyIndex(envelope: string, tenantId: string, collectionId: string, fieldName: string): number;
}

/**
 * A ring's primary key, named by a blind index of a fixed value under it:
 * deterministic, one-way (a keyed hash), and it changes with the primary,
 * which is the key a migration or rotation writes under. Not with a ring
 * of an `indexKey`, whose blind-index key is that key under every secret:
 * no call of the ring names its data key deterministically, so the docs
 * ask for a job name per primary there (docs/drizzle.md, `job`).
 */
function primaryOf(ring: Ring): string | null {
  try {
    return ring.blindIndex('ale job fingerprint', 'ale', 'ale_jobs', 'primary');
  } catch {
    // A ring of tenants holds no key of its own to name; its tenants' keys are the store's business.
    return null;
  }
}
