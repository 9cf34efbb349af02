// The bodies of migratePlaintext, rotateKeys and convertStorage, each once:
// the batched, resumable loop, and the plan that decides what each row
// needs. They see rows through a BatchDriver only; batch.ts builds one over
// Drizzle and exports the helpers.
import * as native from '../../index.js';
import type { KeyRing } from '../../index.js';
import { atColumn } from './failures.js';
import { codedError } from '../shared/errors.js';
import { parseJson } from '../shared/json.js';
import { textOf, valueOf, type RangeType } from './range/encoding.js';
import type { Sealer } from './process-ring.js';
import { binaryPlaintext, bytesOnly, textOnly, type Storage } from './storage.js';

/** What a migration, rotation or conversion has done so far. */
export interface Progress {
  /** Rows read so far. */
  scanned: number;
  /**
   * Values written (encrypted, re-encrypted, or moved into the other
   * storage) so far: compare-and-set updates that the database says changed
   * their row (the driver's affected-row count). An update that changed no
   * row is not counted: its row was changed by someone else since it was
   * read (another worker, one whose lease ran out, or the application), and
   * holds what they wrote.
   */
  written: number;
  /**
   * Values that needed nothing (already envelopes, or already under the
   * primary key). convertStorage: rows whose target column already holds a
   * value while the source does too; both are left as they are.
   */
  skipped: number;
  /** NULL values, left NULL. convertStorage: rows whose source is NULL (nothing to move, or moved already). */
  nulls: number;
  batches: number;
  /** The last row key handled; a rerun may start after it. */
  lastKey: unknown;
}

/** How a batch loop runs. */
export interface LoopOptions {
  /** Rows per transaction. Default 500. */
  batchSize?: number;
  /** Called after every committed batch. */
  onProgress?: (progress: Progress) => void;
}

/** A stored value as a batch reads it: text, bytes (a binary column), or NULL. */
export type Cell = string | Uint8Array | null;

/**
 * A compare-and-set on one row: set the `set` cells (by index into the
 * columns read) where every `expect` cell still holds what was read (NULL:
 * still NULL). A row changed by someone else since is left alone.
 */
export interface RowUpdate {
  key: unknown;
  set: [column: number, value: Cell][];
  expect: [column: number, value: Cell][];
}

export interface FetchedRow {
  key: unknown;
  /** Undefined where the helper needs no tenant (convertStorage). */
  tenant: string | undefined;
  cells: Cell[];
}

/**
 * What a dialect supplies: read a batch of raw rows after a key, and write a
 * batch of compare-and-set updates in one transaction.
 */
export interface BatchDriver {
  /** Up to `limit` rows with a key above `afterKey` (all when undefined) and at most `upTo` (no bound when undefined), by key. */
  fetch(afterKey: unknown, limit: number, upTo?: unknown): Promise<FetchedRow[]>;
  /** Runs the updates in one transaction; resolves to how many of them changed their row. */
  apply(updates: RowUpdate[]): Promise<number>;
  /** The key `offset` rows after the first key above `afterKey` (the start when undefined), or undefined past the end: where several workers cut the table into ranges. */
  keyAt?(afterKey: unknown, offset: number): Promise<unknown>;
}

/**
 * The updates one row needs; what it leaves alone is counted in `progress`.
 * `operation` names what it does: a job of several workers is bound to it.
 */
export type Plan = ((row: FetchedRow, progress: Progress) => RowUpdate[]) & { operation?: string };

/**
 * The shared loop: keyset pagination over the table by primary key, one
 * transaction per batch, compare-and-set writes. Safe to kill and rerun:
 * rows already done are skipped by the plan, and a row changed by someone
 * else since it was read is left alone (the compare fails).
 */
export async function runBatches(driver: BatchDriver, options: LoopOptions, plan: Plan): Promise<Progress> {
  const progress: Progress = { scanned: 0, written: 0, skipped: 0, nulls: 0, batches: 0, lastKey: undefined };
  await batchLoop(driver, options, plan, progress);
  return progress;
}

/**
 * The loop itself, from the row after `options.after`, adding to
 * `progress`. `afterBatch` (the lease runner's) runs after each committed
 * batch; the loop stops when it answers false.
 */
export async function batchLoop(
  driver: BatchDriver,
  options: LoopOptions & { after?: unknown },
  plan: Plan,
  progress: Progress,
  afterBatch?: (lastKey: unknown) => Promise<boolean>,
): Promise<void> {
  const batchSize = options.batchSize ?? 500;
  if (!Number.isInteger(batchSize) || batchSize < 1) throw codedError('ALE_INVALID_INPUT', 'options.batchSize must be a positive integer');
  let after: unknown = options.after;
  for (;;) {
    const rows = await driver.fetch(after, batchSize);
    if (rows.length === 0) return;
    const updates = rows.flatMap((row) => plan(row, progress));
    progress.written += await driver.apply(updates);
    progress.scanned += rows.length;
    progress.batches++;
    progress.lastKey = after = rows[rows.length - 1].key;
    options.onProgress?.({ ...progress });
    if (afterBatch && !(await afterBatch(after))) return;
  }
}

/** Where a cell sits: for the AAD, its storage, and an error's message; and what its column seals with. */
export interface CellSpec {
  table: string;
  column: string;
  collection: string;
  field: string;
  storage: Storage;
  /** The ring the column seals with: its tenant key store's sealer, its keyRing, or the process-wide ring. */
  sealer: Sealer;
  /** Whether the column has `keys`: its values belong under each tenant's own keys, never the process-wide ring. */
  tenantKeys: boolean;
  /** Whether the column is encryptedJson, whose reads parse the plaintext as JSON. */
  json: boolean;
  /** What a typed column holds (encryptedNumber, encryptedBigint, encryptedDate), whose reads parse its text; undefined for text and JSON. */
  range: RangeType | undefined;
}

/** What to write into a non-NULL cell, or null when it needs nothing; `operation` names what it does, as Plan's. */
type Decide = ((cell: string | Uint8Array, tenant: string, spec: CellSpec) => string | Uint8Array | null) & { operation?: string };

/** A plan that decides every non-NULL cell on its own (migratePlaintext, rotateKeys). */
export function eachCell(specs: CellSpec[], decide: Decide): Plan {
  const plan: Plan = (row, progress) => {
    const updates: RowUpdate[] = [];
    row.cells.forEach((cell, i) => {
      if (cell === null) {
        progress.nulls++;
        return;
      }
      const next = atCell(specs[i], row.key, () => decide(cell, row.tenant as string, specs[i]));
      if (next === null) progress.skipped++;
      else updates.push({ key: row.key, set: [[i, next]], expect: [[i, cell]] });
    });
    return updates;
  };
  plan.operation = decide.operation;
  return plan;
}

/** Runs `op` for one cell; a failure becomes an AleColumnError naming the table, column and row. */
function atCell<T>(spec: CellSpec, key: unknown, op: () => T): T {
  return atColumn({ table: spec.table, column: spec.column, collection: spec.collection, rowKey: key }, op);
}

/**
 * Encrypt what is not yet an envelope, under `ring` when given, else under
 * the column's own sealer (a `keys` column: its tenant's active data key);
 * leave envelopes untouched. A binary column follows binaryPlaintext(), the
 * rule its reads follow.
 */
export function encryptPlaintext(ring: KeyRing | undefined): Decide {
  const readsRing = ring && readsWhatRingSeals(ring, 'migratePlaintext');
  const decide: Decide = (cell, t, spec) => {
    const { collection: c, field: f, storage, sealer, json, range } = spec;
    readsRing?.(t, spec);
    const readable = (text: string) => (json ? jsonText(text) : range ? typedText(range, text) : text);
    if (storage === 'binary') {
      const text = binaryPlaintext(cell);
      if (text === undefined) return null;
      return (ring ?? sealer).encryptBinary(readable(text), t, c, f);
    }
    if (native.isEnvelope(cell)) return null;
    return (ring ?? sealer).encrypt(readable(textOnly(cell)), t, c, f);
  };
  decide.operation = 'migratePlaintext';
  return decide;
}

/**
 * `text`, when it is JSON text, which an encryptedJson column's reads
 * parse; sealed otherwise, it would never read back (ALE_INVALID_JSON). An
 * empty string, which SveltyCMS leaves unencrypted and a legacy read serves
 * as itself (codec.ts, parseJsonText), becomes its JSON.
 */
function jsonText(text: string): string {
  if (text === '') return '""';
  parseJson(
    text,
    'the plaintext is not JSON text, which an encryptedJson column reads (as Drizzle\'s mode: "json" stores it), so it was not encrypted. ' +
      'A column of plain strings is an encryptedText column; a value meant as a JSON string is stored as its JSON text (with its quotes) first',
  );
  return text;
}

/**
 * `text`, when it is exactly what a typed column writes (`String(n)`, a
 * bigint's digits, `toISOString()`). Sealed otherwise, every read of the
 * row would fail (and pages would leave it out); or, for text the reads
 * parse leniently (`12.50`, digits past 2^53,
 * 2023-02-29, which a Date rolls to March 1), every read would give
 * another value than the one stored, as would the range index.
 */
function typedText(range: RangeType, text: string): string {
  let same = false;
  try {
    same = textOf(range, valueOf(range, text, 'migratePlaintext')) === text;
  } catch {
    // not one of the column's values: refused below
  }
  if (!same) {
    throw codedError(
      'ALE_INVALID_INPUT',
      `the plaintext is not the text a ${range} column writes (${RANGE_FORMS[range]}), so it was not encrypted; write it in that form first`,
    );
  }
  return text;
}

const RANGE_FORMS: Record<RangeType, string> = { number: 'String(n)', bigint: "a bigint's digits", date: "a Date's toISOString()" };

/**
 * `driver`, loading the tenants of each fetched batch with `load` before the
 * plan (which is synchronous) runs on it: what a `keys` column's sealer needs.
 */
export function loadingTenants(driver: BatchDriver, load: (tenant: string) => Promise<void>): BatchDriver {
  return {
    async fetch(afterKey, limit, upTo) {
      const rows = await driver.fetch(afterKey, limit, upTo);
      await Promise.all([...new Set(rows.map((r) => r.tenant as string))].map(load));
      return rows;
    },
    apply: (updates) => driver.apply(updates),
    keyAt: driver.keyAt && ((afterKey, offset) => driver.keyAt!(afterKey, offset)),
  };
}

/** Re-encrypt envelopes that only a previous key opens. Plaintext is an error. */
export function reencryptUnderPrimary(ring: KeyRing): Decide {
  const readsRing = readsWhatRingSeals(ring, 'rotateKeys');
  const decide: Decide = (cell, t, spec) => {
    const { collection: c, field: f, storage } = spec;
    readsRing(t, spec);
    if (storage === 'binary') {
      const bytes = bytesOnly(cell);
      if (ring.keyIndex(native.envelopeFromBytes(bytes), t, c, f) === 0) return null;
      return ring.encryptBinary(ring.decryptBinary(bytes, t, c, f), t, c, f);
    }
    const text = textOnly(cell);
    if (ring.keyIndex(text, t, c, f) === 0) return null;
    return ring.encrypt(ring.decrypt(text, t, c, f), t, c, f);
  };
  decide.operation = 'rotateKeys';
  return decide;
}

/**
 * A check, once per tenant and column, that the column's own ring opens
 * what `ring` seals: an operation given a keyRing the column does not read
 * with (a `KeyRing.fromEnv()` for a column with a keyRing of its own, say)
 * would write values no read opens, count them written, and a rerun would
 * skip them as envelopes.
 */
function readsWhatRingSeals(ring: KeyRing, operation: string): (tenant: string, spec: CellSpec) => void {
  const checked = new Set<string>();
  return (tenant, { table, column, collection, field, sealer }) => {
    const context = JSON.stringify([tenant, table, column]);
    if (checked.has(context)) return;
    const probe = ring.encrypt('', tenant, collection, field);
    try {
      sealer.decrypt(probe, tenant, collection, field);
    } catch (e) {
      // Only "no key of it opens this" is the ring's fault; anything else (no key configured, a bad tenant id) says more as it is.
      if ((e as { code?: unknown })?.code !== 'ALE_AUTH_FAILED') throw e;
      throw codedError(
        'ALE_INVALID_KEY',
        `${operation}: column "${column}" cannot read what options.keyRing seals: its own ring (its keyRing, its tenant keys or the process-wide ring) lacks that ring's primary key. Give the column a ring that holds it, or leave options.keyRing out`,
      );
    }
    checked.add(context);
  };
}

/**
 * convertStorage's plan. Pair i reads its source at cell 2i and its target
 * at cell 2i + 1; a source value moves into a NULL target in the target's
 * storage and the source becomes NULL, in one compare-and-set. The move is
 * lossless and needs no key (envelopeToBytes, envelopeFromBytes): nothing
 * is decrypted. A target that already holds a value is left alone, and so
 * is its source.
 */
export function moveToOtherStorage(pairs: { from: CellSpec; to: CellSpec }[]): Plan {
  const plan: Plan = (row, progress) => {
    const updates: RowUpdate[] = [];
    pairs.forEach(({ from, to }, i) => {
      const source = row.cells[2 * i];
      const target = row.cells[2 * i + 1];
      if (source === null) progress.nulls++;
      else if (target !== null) progress.skipped++;
      else if (to.tenantKeys && isV1(source)) {
        // Moving it would write a value under the process-wide key into a column whose values belong under the tenant's.
        atCell(from, row.key, () => {
          throw codedError('ALE_INVALID_INPUT', 'the value is a v1 envelope under the process-wide key, and the target column has keys: run convertToTenantKeys on the source column first');
        });
      } else {
        const next = atCell(from, row.key, () => (to.storage === 'binary' ? native.envelopeToBytes(textOnly(source)) : native.envelopeFromBytes(bytesOnly(source))));
        updates.push({ key: row.key, set: [[2 * i + 1, next], [2 * i, null]], expect: [[2 * i, source], [2 * i + 1, null]] });
      }
    });
    return updates;
  };
  plan.operation = 'convertStorage';
  return plan;
}

/** Whether a cell holds a v1 envelope (one that names no key), in either storage; a malformed one is not, and the move says why. */
function isV1(cell: string | Uint8Array): boolean {
  try {
    return native.envelopeKeyId(cell) === null;
  } catch {
    return false;
  }
}

/** The ring a helper needs to tell keys apart: the one given, or a coded error. */
export function requireRing(ring: KeyRing | undefined, what: string): KeyRing {
  if (ring) return ring;
  throw codedError('ALE_NOT_INITIALIZED', `${what} needs { keyRing }: a KeyRing of [primary, ...previous] to tell which key each value is under`);
}
