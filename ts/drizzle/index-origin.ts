// Where a stored index goes. A StoredIndex carries where a column read it:
// the kind of index, the encrypted column's collection and field, and the
// tenant in scope then. Its tokens are bound to them, so written into a
// column of another kind, collection or field, or for another tenant, they
// are tokens that no search or lookup there finds: the row drops out of
// them with nothing to say so. A CMS that copies a document into another
// tenant by spreading the row it read would do exactly that. Such a write
// is refused; the field's plaintext indexes the copy.
import { AleColumnError } from './failures.js';
import { originOf, storedIndexOf, type IndexOrigin } from './stored-index.js';

/** An index column's binding: which index it is, and the tenant its values are bound to now, where one is known. */
export interface IndexSite {
  /** The kind of index with the encrypted column's collection and field, as a message names it ("search index of posts.body"). */
  readonly derivation: string;
  readonly where: { column: string; collection: string; field: string };
  /** The column's tenant, or the scope's; undefined outside a scope (or where the column's tenant function throws). */
  tenantIfAny(): string | undefined;
}

/** The origin of a value a column of `site` reads now. */
export function originAt(site: IndexSite): IndexOrigin {
  return { derivation: site.derivation, tenant: site.tenantIfAny() };
}

/**
 * The stored form of `value` when it is a StoredIndex that may go into a
 * column of `site` now; undefined when it is no StoredIndex. Throws
 * ALE_INVALID_INPUT when it was read from another index or for another
 * tenant than the one in scope. Where a tenant is not known, on either
 * side (read or written outside a scope), tenants are not compared.
 */
export function storedFor(value: unknown, site: IndexSite): string | undefined {
  const stored = storedIndexOf(value);
  if (stored === undefined) return undefined;
  const origin = originOf(value);
  if (origin === undefined) return stored;
  const fix = "Write the field's plaintext to this column instead, which indexes it here.";
  if (origin.derivation !== site.derivation) {
    throw new AleColumnError({ code: 'ALE_INVALID_INPUT', message: `this StoredIndex was read from the ${origin.derivation}, and its tokens are not this ${site.derivation}'s: no search or lookup here would find the row. ${fix}` }, site.where);
  }
  if (origin.tenant === undefined) return stored;
  const now = site.tenantIfAny();
  if (now !== undefined && now !== origin.tenant) {
    throw new AleColumnError({ code: 'ALE_INVALID_INPUT', message: `this StoredIndex was read for tenant "${origin.tenant}", and its tokens are that tenant's: no search or lookup of this tenant would find the row. ${fix}` }, { ...site.where, tenant: now });
  }
  return stored;
}
