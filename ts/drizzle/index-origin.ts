// Where a stored index goes. A StoredIndex carries where a column read it:
// the kind of index, the encrypted column's collection and field, and the
// tenant in scope then. Its tokens are bound to them, so written into a
// column of another kind, collection or field, or for another tenant, they
// are tokens that no search or lookup there finds: the row drops out of
// them with nothing to say so. A CMS that copies a document into another
// tenant by spreading the row it read would do exactly that. Such a value
// is refused, in a write and in a condition; the field's plaintext indexes
// the copy.
import type { FieldCodec } from './codec.js';
import { AleColumnError } from './failures.js';
import { originOf, storedIndexOf, type IndexOrigin } from './stored-index.js';

/** An index column's binding: which index it is, and the tenant its values are bound to now, where one is known. */
export interface IndexSite {
  /** The kind of index, the encrypted column's collection and field, and what else makes its tokens: compared. */
  readonly key: string;
  /** The same as a message names it ("search index of posts.body (words)"). */
  readonly text: string;
  readonly where: { column: string; collection: string; field: string };
  /** The column's fixed tenant, or the scope's; undefined outside a scope, and for a column whose tenant is a function. */
  tenantIfAny(): string | undefined;
  /** One origin per tenant, made once: a read allocates nothing for it. */
  readonly origins: Map<string | undefined, IndexOrigin>;
}

/** The site of index column `column` on `base`'s collection and field: `kind` of index, `detail` what else makes its tokens. */
export function indexSite(base: Pick<FieldCodec, 'collection' | 'field' | 'tenantIfAny'>, column: string, kind: string, detail?: string): IndexSite {
  const { collection, field } = base;
  return {
    key: JSON.stringify([kind, collection, field, detail ?? null]),
    text: `${kind} of ${collection}.${field}${detail === undefined ? '' : ` (${detail})`}`,
    where: { column, collection, field },
    tenantIfAny: base.tenantIfAny,
    origins: new Map(),
  };
}

/** The origin of a value a column of `site` reads now. */
export function originAt(site: IndexSite): IndexOrigin {
  const tenant = site.tenantIfAny();
  let origin = site.origins.get(tenant);
  if (origin === undefined) {
    origin = Object.freeze({ key: site.key, text: site.text, tenant });
    site.origins.set(tenant, origin);
  }
  return origin;
}

/** The origin of a value whose tokens the driver handed back rounded (SearchSql.exact): refused by storedFor. */
export function roundedAt(site: IndexSite): IndexOrigin {
  return Object.freeze({ ...originAt(site), rounded: true });
}

/**
 * The stored form of `value` when it is a StoredIndex that may go into a
 * column of `site` now, as a value or in a condition; undefined when it is
 * no StoredIndex. Throws ALE_INVALID_INPUT when it was read from another
 * index or for another tenant than the one in scope. Where a tenant is not
 * known on either side, tenants are not compared.
 */
export function storedFor(value: unknown, site: IndexSite): string | undefined {
  const stored = storedIndexOf(value);
  if (stored === undefined) return undefined;
  const origin = originOf(value);
  if (origin === undefined) return stored;
  const fix = "Give this column the field's plaintext instead, which it indexes for the tenant in scope.";
  if (origin.rounded) {
    throw new AleColumnError(
      { code: 'ALE_INVALID_INPUT', message: `this StoredIndex was read through JSON (a relation nested in db.query), which rounds its 64-bit tokens: stored, its row would drop out of the ${site.text}'s queries. Leave the column out of the write, or give it the field's plaintext, which it indexes for the tenant in scope.` },
      site.where,
    );
  }
  if (origin.key !== site.key) {
    throw new AleColumnError({ code: 'ALE_INVALID_INPUT', message: `this StoredIndex was read from the ${origin.text}, and its tokens are not this ${site.text}'s: no search or lookup here would find its row. ${fix}` }, site.where);
  }
  if (origin.tenant === undefined) return stored;
  const now = site.tenantIfAny();
  if (now !== undefined && now !== origin.tenant) {
    throw new AleColumnError({ code: 'ALE_INVALID_INPUT', message: `this StoredIndex was read for tenant "${origin.tenant}", and its tokens are that tenant's: no search or lookup of this tenant would find its row. ${fix}` }, { ...site.where, tenant: now });
  }
  return stored;
}
