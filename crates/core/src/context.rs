//! The encryption context: which tenant, collection and field a value belongs to.
//!
//! Its bytes, `tenant:collection:field`, are the AEAD's additional data. Each
//! part must be non-empty and free of `:`, so the join is unambiguous:
//! `("a:b", "c")` can never produce the same AAD as `("a", "b:c")`.

use crate::error::{AleError, Result};

/// A validated `(tenant, collection, field)` triple.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Context<'a> {
    tenant: &'a str,
    collection: &'a str,
    field: &'a str,
}

impl<'a> Context<'a> {
    /// Validates the three parts. Fails with `ALE_INVALID_CONTEXT`.
    pub fn new(tenant: &'a str, collection: &'a str, field: &'a str) -> Result<Self> {
        check("tenantId", tenant)?;
        check("collectionId", collection)?;
        check("fieldName", field)?;
        Ok(Self {
            tenant,
            collection,
            field,
        })
    }

    /// `[tenant, collection, field]`.
    pub fn parts(&self) -> [&'a str; 3] {
        [self.tenant, self.collection, self.field]
    }

    /// Writes the AAD (`tenant:collection:field`) into `out`, replacing its contents.
    pub fn write_aad(&self, out: &mut Vec<u8>) {
        self.write_aad_after(&[], out);
    }

    /// Writes `prefix` then the AAD into `out`, replacing its contents: a v2
    /// value's AAD starts with its fixed-length key id.
    pub fn write_aad_after(&self, prefix: &[u8], out: &mut Vec<u8>) {
        out.clear();
        out.reserve(prefix.len() + self.aad_len());
        out.extend_from_slice(prefix);
        out.extend_from_slice(self.tenant.as_bytes());
        out.push(b':');
        out.extend_from_slice(self.collection.as_bytes());
        out.push(b':');
        out.extend_from_slice(self.field.as_bytes());
    }

    /// The AAD as a fresh vector.
    pub fn aad(&self) -> Vec<u8> {
        let mut v = Vec::new();
        self.write_aad(&mut v);
        v
    }

    fn aad_len(&self) -> usize {
        self.tenant.len() + self.collection.len() + self.field.len() + 2
    }
}

/// A [`Context`] that owns its parts, for one that is kept and used again
/// (the addon's context handles): validated once, when made from a
/// [`Context`], so that each use is a borrow with no check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextBuf {
    tenant: Box<str>,
    collection: Box<str>,
    field: Box<str>,
}

impl ContextBuf {
    /// The context these parts make.
    pub fn as_context(&self) -> Context<'_> {
        Context {
            tenant: &self.tenant,
            collection: &self.collection,
            field: &self.field,
        }
    }
}

impl From<Context<'_>> for ContextBuf {
    fn from(context: Context<'_>) -> Self {
        Self {
            tenant: context.tenant.into(),
            collection: context.collection.into(),
            field: context.field.into(),
        }
    }
}

fn check(part: &'static str, value: &str) -> Result<()> {
    if value.is_empty() {
        return Err(AleError::InvalidContext {
            part,
            reason: "is empty",
        });
    }
    // Context parts are short: a plain scan beats a SIMD search's set-up.
    if value.as_bytes().contains(&b':') {
        return Err(AleError::InvalidContext {
            part,
            reason: "contains ':'",
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_owned_context_gives_back_the_context_it_was_made_from() {
        let c = Context::new("t1", "users", "email").expect("valid");
        let owned = ContextBuf::from(c);
        assert_eq!(owned.as_context(), c);
        assert_eq!(owned.as_context().aad(), b"t1:users:email");
    }

    #[test]
    fn joins_with_colons() {
        let c = Context::new("t1", "users", "email").expect("valid");
        assert_eq!(c.aad(), b"t1:users:email");
    }

    #[test]
    fn rejects_empty_and_colon_in_each_part() {
        for (t, c, f, part) in [
            ("", "c", "f", "tenantId"),
            ("t", "", "f", "collectionId"),
            ("t", "c", "", "fieldName"),
            ("a:b", "c", "f", "tenantId"),
            ("t", "a:b", "f", "collectionId"),
            ("t", "c", ":", "fieldName"),
        ] {
            let err = Context::new(t, c, f).expect_err("must be rejected");
            assert_eq!(err.code(), "ALE_INVALID_CONTEXT");
            assert!(err.to_string().contains(part), "{err}");
        }
    }

    #[test]
    fn unicode_parts_are_allowed() {
        let c = Context::new("tënant", "コレクション", "📧").expect("valid");
        assert_eq!(c.aad(), "tënant:コレクション:📧".as_bytes());
    }
}
