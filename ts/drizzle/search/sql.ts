// How a dialect stores search tokens and asks for them (sqlite-core,
// pg-core and mysql-core each give one), and the helpers they share.
import { sql, type Column, type SQL } from 'drizzle-orm';
import { hexWords } from '../../shared/hex-words.js';
import { wordText } from '../../shared/search-words.js';
import type { IndexCodec } from '../index-codec.js';

export interface SearchSql {
  /** The column's SQL type. */
  type: string;
  /**
   * A value's tokens (8 bytes each) as a column with `codec` stores them:
   * on SQLite and MySQL, a search index column's as wordText's text (30
   * bits a token), a range index column's as hexWords' (64).
   */
  store(tokens: Buffer, codec: IndexCodec): string;
  /** What the driver reads back, as `store` wrote it. */
  read(stored: unknown): string;
  /**
   * Refuses a server whose settings would leave the words of the columns
   * out of the index (MySQL's FULLTEXT word lengths): `kinds` says which
   * the columns hold, search words or range words in the index itself.
   * reindexSearch asks first.
   */
  serverCheck?(db: unknown, kinds: { search: boolean; range: boolean }): Promise<void>;
  /** Whether what the driver handed back holds the tokens exactly (only PostgreSQL's can fail to); taken as true when left out. */
  exact?(stored: unknown): boolean;
  /** The tokens of a value `read` gave, one string each (the same token, the same string). */
  list(stored: string): string[];
  /** The rows that hold every token of at least one set: the candidates. */
  where(column: Column, sets: Buffer[], codec: IndexCodec): SQL;
  /**
   * The most tokens a range query looks up (range/tree.ts's cover): past
   * it, coarser nodes are looked up and the excess filtered out with
   * `except`. Where every token is an index lookup either way (FTS5,
   * FULLTEXT) the cover is exact; PostgreSQL plans a GIN scan from the
   * looked-up tokens alone, and past a few dozen prefers to scan the table.
   */
  coverLimit: number;
  /**
   * orderedPage()'s default batch once a range is narrowed (the query of a
   * rung, or of the part a sample points to), when larger than its batch.
   * PostgreSQL plans from the query's LIMIT: for a small one it walks the
   * primary key when it guesses the range holds many rows, which a coarse
   * cover with an exclusion makes it guess, and reads the whole table when
   * the range is nearly empty; a larger LIMIT makes it ask the GIN index
   * (docs/search.md, "Ranges at 100,000 rows").
   */
  narrowBatch: number;
  /**
   * How to ask for a narrowed part or a rung of `column`, where the rows
   * are expected to be few, when not as any other range (undefined): with
   * a cover of at most `coverLimit` tokens, and the condition `where`
   * builds from its sets (as `any` takes them). PostgreSQL asks the exact
   * cover for the rows' primary keys first, so that the query's LIMIT
   * cannot lead the planner to walk the primary key (docs/search.md,
   * "Narrowed parts on PostgreSQL").
   */
  narrowed?(column: Column): NarrowedQuery | undefined;
  /**
   * For orderedPage() when fetch's first rows run against the page's order
   * (ids that grow with the values, newest first): the condition for at
   * most `n` of a part's rows, half with the least primary keys and half
   * with the greatest, from a cover of at most `coverLimit` tokens a key
   * (as `narrowed`'s). PostgreSQL and MariaDB ask for walks of the primary
   * key from both ends that test each row (range/table-key.ts, bothEnds),
   * which cost what the sample holds where the part's rows are at those
   * ends and the database walks the key. Undefined where the column's table
   * cannot be asked that way (range/table-key.ts, tableKey): orderedPage()
   * then narrows from fetch's first rows alone. SQLite has none: its
   * sampler takes both ends of its index already.
   */
  ends?(column: Column): EndsQuery | undefined;
  /**
   * Whether orderedPage() asks a range's spots (range/spots.ts) before it
   * reads a part it has no sampler for: where a query costs what it finds
   * through an index (GIN, FULLTEXT), a spot level's rows of a part cost
   * what they are, where the part's own query costs every row it holds.
   * SQLite samples its FTS5 index instead, and its scan without FTS5 reads
   * the table for any query.
   */
  spots: boolean;
  /** Whether a range column may name a table of its tokens (RangeIndexOptions.tokenTable), which `any` then asks: MySQL and MariaDB. */
  tokenTables?: boolean;
  /** The rows that hold at least one of `tokens` and none of `except` (8 bytes each): a range's candidates under one key. */
  any(column: Column, tokens: Buffer, except: Buffer, codec: IndexCodec): SQL;
  /**
   * For orderedPage() to learn where a range's values lie at the cost of
   * `n` rows rather than of every row the range holds: the condition for at
   * most `n` of the rows `any` finds (the index's first and last, half
   * each), where the index of a column with `codec` stops once it has them.
   * FTS5 does; InnoDB's FULLTEXT and a GIN bitmap find every match first,
   * and a scan without FTS5 may have no rowid to sample by: undefined.
   */
  sampler?(codec: IndexCodec): ((column: Column, tokens: Buffer, except: Buffer, n: number) => SQL) | undefined;
}

/** SearchSql.store where tokens are stored as words (SQLite, MySQL): a search index column's wordText, a range index column's hexWords. */
export function storeWords(tokens: Buffer, codec: IndexCodec): string {
  return codec.source === 'text' ? wordText(tokens) : hexWords(tokens);
}

/** SearchSql.narrowed's query: the cover's size, and the condition for the rows of its sets (as `any` takes them). */
export interface NarrowedQuery {
  coverLimit: number;
  where(include: Buffer[], exclude: Buffer[]): SQL;
}

/** SearchSql.ends's query: the cover's size, and the condition for at most `n` rows from its sets (as `any` takes them). */
export interface EndsQuery {
  coverLimit: number;
  where(include: Buffer[], exclude: Buffer[], n: number): SQL;
}

/**
 * The most tokens of one set a query asks the database for. Any subset of a
 * query's tokens finds every row the whole set finds (and perhaps more,
 * which the exact test removes), so a long query costs a bounded lookup;
 * 16 tokens (of 64 bits on PostgreSQL, 30 in a word elsewhere) leave no
 * room for chance matches in practice.
 */
export const MAX_QUERY_TOKENS = 16;

/** At most MAX_QUERY_TOKENS tokens of `set`, spread over it (8 bytes each). */
export function cappedTokens(set: Buffer): Buffer {
  const count = set.length / 8;
  if (count <= MAX_QUERY_TOKENS) return set;
  const step = count / MAX_QUERY_TOKENS;
  const out = Buffer.allocUnsafe(MAX_QUERY_TOKENS * 8);
  for (let i = 0; i < MAX_QUERY_TOKENS; i++) {
    const at = Math.floor(i * step) * 8;
    set.copy(out, i * 8, at, at + 8);
  }
  return out;
}

/** Every token of `tokens` as 16 hex digits (a range index column's words, hexWords'). */
export function allHex(tokens: Buffer): string[] {
  const out: string[] = [];
  for (let at = 0; at < tokens.length; at += 8) out.push(tokens.toString('hex', at, at + 8));
  return out;
}

/**
 * Rows whose range index text `column` (tokens as 16 hex digits between
 * spaces, so a hit of `instr` is a whole token) holds one of `tokens` and none of
 * `except`, tested row by row: SQLite without FTS5, and the walks of
 * MariaDB's SearchSql.ends.
 */
export function inText(column: Column | SQL, tokens: Buffer, except: Buffer): SQL {
  const has = (list: string[]) => anyOf(list.map((t) => sql`instr(${column}, ${t}) > 0`));
  const out = allHex(except);
  return out.length === 0 ? has(allHex(tokens)) : sql`(${has(allHex(tokens))} and not ${has(out)})`;
}

/**
 * `a or b or …` as a balanced tree: an exact cover can have a few hundred
 * terms a key, and a flat chain is as deep as it is long, against SQLite's
 * limit of 1,000 on an expression's depth.
 */
function anyOf(terms: SQL[]): SQL {
  if (terms.length === 1) return sql`(${terms[0]})`;
  const half = terms.length >> 1;
  return sql`(${anyOf(terms.slice(0, half))} or ${anyOf(terms.slice(half))})`;
}
