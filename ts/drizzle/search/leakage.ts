// searchLeakage: what the search tokens of a column tell someone who reads
// the database, measured on the live rows, per tenant, in figures and in
// plain words, with a warning past each threshold (docs/search.md,
// "Leakage"). It reads the tokens only: nothing is decrypted.
import { createHash } from 'node:crypto';
import type { Column, Table } from 'drizzle-orm';
import { codedError } from '../../shared/errors.js';
import { drizzleDriver, type BatchOptions } from '../batch.js';
import type { Transact } from '../transactions.js';
import { indexColumnOf } from '../probe.js';

export interface LeakageOptions {
  /** The table to read. */
  table: Table;
  /** Its primary-key column: rows are read in its order, in batches. */
  key: Column;
  /** The search index column to measure. */
  index: Column;
  /** The rows' tenant: a fixed id, or the column that holds it (a report per tenant). */
  tenant: BatchOptions['tenant'];
  /** Rows per read. Default 1,000. */
  batchSize?: number;
}

/** A warning of the report: a threshold passed. */
export interface LeakageWarning {
  code: 'ALE_LEAK_COMMON_TOKEN' | 'ALE_LEAK_EQUAL_VALUES' | 'ALE_LEAK_FEW_ROWS' | 'ALE_LEAK_MIXED_KEYS';
  message: string;
}

/** What the column's tokens show of one tenant's rows. */
export interface LeakageReport {
  tenant: string;
  /** Rows of the tenant, and those with tokens (not NULL). */
  rows: number;
  indexed: number;
  /** Distinct tokens, and tokens in all (a row's distinct tokens, summed over rows); on SQLite and MySQL, the stored words (a token's first 30 bits). */
  distinct: number;
  tokens: number;
  /** Tokens per indexed row: median and largest (they grow with a value's length). */
  medianPerRow: number;
  maxPerRow: number;
  /** The share of indexed rows that hold the most frequent token. */
  topTokenShare: number;
  /** The share of indexed rows whose whole token set another row has too: most likely equal values. */
  equalSetShare: number;
  /**
   * How many index keys the tenant's queries look up tokens of: more than
   * one while the ring keeps a previous secret with an index key of its own,
   * or a `keys` store reads v1 values. Until every row is re-indexed, the
   * figures above may count a value's tokens under each key apart and
   * understate what one key's show. Undefined where the keys cannot be
   * asked: a `keys` column whose tenant is not loaded (keys.load first), no
   * ring set.
   */
  keys: number | undefined;
  /** What an observer of the database learns, in plain words. */
  summary: string;
  warnings: LeakageWarning[];
}

/** The thresholds of the warnings (docs/search.md, "Leakage"). */
export const LEAKAGE_THRESHOLDS = { topTokenShare: 0.5, equalSetShare: 0.1, fewRows: 100 } as const;

interface Counts {
  rows: number;
  indexed: number;
  perRow: number[];
  tokens: Map<string, number>;
  /** Rows per distinct token set, by the set's SHA-256. */
  sets: Map<string, number>;
}

export function leakageReporter(transact: Transact) {
  /** The report of each tenant in the rows, by tenant id. */
  return async function searchLeakage(db: unknown, options: LeakageOptions): Promise<LeakageReport[]> {
    const { sql, codec } = indexColumnOf(options?.index, 'searchLeakage');
    if (typeof options.tenant !== 'string' && !options.tenant?.column) {
      throw codedError('ALE_INVALID_CONTEXT', 'options.tenant must be a tenant id, or { column } naming the column that holds it');
    }
    const batchSize = options.batchSize ?? 1_000;
    if (!Number.isInteger(batchSize) || batchSize < 1) throw codedError('ALE_INVALID_INPUT', 'options.batchSize must be a positive integer');
    const driver = drizzleDriver(db, options.table, options.key, [options.index], options.tenant, transact);
    const byTenant = new Map<string, Counts>();
    for (let after: unknown = undefined; ; ) {
      const rows = await driver.fetch(after, batchSize);
      if (rows.length === 0) break;
      for (const row of rows) {
        const tenant = row.tenant as string;
        let c = byTenant.get(tenant);
        if (c === undefined) byTenant.set(tenant, (c = { rows: 0, indexed: 0, perRow: [], tokens: new Map(), sets: new Map() }));
        c.rows++;
        const cell = row.cells[0];
        if (cell === null) continue;
        const stored = sql.read(cell);
        const tokens = sql.list(stored);
        c.indexed++;
        c.perRow.push(tokens.length);
        for (const t of tokens) c.tokens.set(t, (c.tokens.get(t) ?? 0) + 1);
        // Rows with equal sets counted by a digest of the set: the sets themselves, a 4 KB value's thousands of words each, would hold the whole index in memory.
        const set = createHash('sha256').update(stored).digest('base64');
        c.sets.set(set, (c.sets.get(set) ?? 0) + 1);
      }
      after = rows[rows.length - 1].key;
    }
    return [...byTenant].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([tenant, c]) => report(tenant, c, codec.keysAsked(tenant), options.index.name, codec.source === 'text' ? GRAMS : NODES));
  };
}

/** How a report names what a token stands for: a text column's grams, a range column's tree nodes. */
interface Words {
  what: string;
  common: string;
  equal: string;
  count: string;
}
const GRAMS: Words = {
  what: 'grams (trigrams, words, word prefixes)',
  common: 'a common word, domain or letter triple, which frequency analysis can name',
  equal: 'most likely the same value',
  count: "grows with its value's length",
};
const NODES: Words = {
  what: 'tree nodes (ranges of values, unlabelled and unordered)',
  common: 'a busy node is a part of the range where values crowd, which a guess of their distribution can label; near the top of the tree, a node holds all values of one sign or magnitude',
  equal: 'equal values: the deepest node is the value itself',
  count: "is 16 for most values, and 16 more for each level of a spot (where the dialect asks them: one value in 16 is a spot), a keyed label of an equality class that says nothing of its value",
};

function report(tenant: string, c: Counts, keys: number | undefined, column: string, words: Words): LeakageReport {
  const perRow = c.perRow.sort((a, b) => a - b);
  let top = 0;
  let tokens = 0;
  for (const n of c.tokens.values()) {
    tokens += n;
    if (n > top) top = n;
  }
  let shared = 0;
  for (const n of c.sets.values()) if (n > 1) shared += n;
  const share = (n: number) => (c.indexed === 0 ? 0 : n / c.indexed);
  const r = {
    tenant,
    rows: c.rows,
    indexed: c.indexed,
    distinct: c.tokens.size,
    tokens,
    medianPerRow: perRow.length === 0 ? 0 : perRow[Math.floor((perRow.length - 1) / 2)],
    maxPerRow: perRow.length === 0 ? 0 : perRow[perRow.length - 1],
    topTokenShare: share(top),
    equalSetShare: share(shared),
    keys,
  };
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  const summary =
    `For tenant "${tenant}", column "${column}": someone who reads the database (or a backup) sees which of the ${r.indexed} indexed rows ` +
    `share each of ${r.distinct} distinct ${words.what}, never what they stand for; ` +
    `the most frequent is in ${pct(r.topTokenShare)} of the rows (${words.common}); ` +
    `${pct(r.equalSetShare)} of the rows have the same tokens as another row (${words.equal}); ` +
    `and each row's token count (median ${r.medianPerRow}, at most ${r.maxPerRow}) ${words.count}. ` +
    'Each query shows which tokens it looks up and which rows hold them.';
  const warnings: LeakageWarning[] = [];
  const t = LEAKAGE_THRESHOLDS;
  if (r.topTokenShare >= t.topTokenShare) {
    warnings.push({ code: 'ALE_LEAK_COMMON_TOKEN', message: `one gram is in ${pct(r.topTokenShare)} of the rows (threshold ${pct(t.topTokenShare)}): the column's values share a common part that frequency analysis can name` });
  }
  if (r.equalSetShare >= t.equalSetShare) {
    warnings.push({ code: 'ALE_LEAK_EQUAL_VALUES', message: `${pct(r.equalSetShare)} of the rows share their whole token set with another row (threshold ${pct(t.equalSetShare)}): equal values show, as a blind index shows them` });
  }
  if (keys !== undefined && keys > 1) {
    warnings.push({
      code: 'ALE_LEAK_MIXED_KEYS',
      message:
        `the tenant's queries look up tokens of ${keys} index keys: until every row holds the primary's (reindexSearch or convertToTenantKeys, until two runs report written: 0), one value indexed under two keys counts as two sets of tokens, ` +
        'so the figures above may understate what one key\'s tokens show, and a backup from before shows the rest. The warning stays while the ring keeps the previous secret, or while a keys store reads v1 values (readV1: false ends it once the conversion is done)',
    });
  }
  if (r.indexed > 0 && r.indexed < t.fewRows) {
    warnings.push({ code: 'ALE_LEAK_FEW_ROWS', message: `only ${r.indexed} indexed rows (threshold ${t.fewRows}): with so few values, an observer who can guess the population matches tokens to grams more easily` });
  }
  return { ...r, summary, warnings };
}
